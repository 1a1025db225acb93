package changefeed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

func TestSummarize(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *time.Time { t := now.Add(-ago); return &t }
	secs := func(s float64) *float64 { return &s }
	lease := func(owner string, lag int64, checkpoint, pending *time.Time) changefeed.LeaseStatus {
		return changefeed.LeaseStatus{Lease: "p.x", Owner: owner, LagEstimate: lag, LastCheckpoint: checkpoint, OldestPending: pending}
	}
	type figures struct {
		CaughtUp                     bool
		Lag                          int64
		Unknown, Unowned             int
		CheckpointAge, OldestPending *float64
	}
	tests := []struct {
		name   string
		leases []changefeed.LeaseStatus
		want   figures
	}{
		{"NoLeasesIsNotCaughtUp", nil, figures{OldestPending: secs(0)}},
		{"EveryLeaseHeldAtZero", []changefeed.LeaseStatus{
			lease("a", 0, at(3*time.Second), nil), lease("a", 0, at(1500*time.Millisecond), nil),
		}, figures{CaughtUp: true, CheckpointAge: secs(1.5), OldestPending: secs(0)}},
		{"LagsAreSummedAndTheOldestPendingWins", []changefeed.LeaseStatus{
			lease("a", 40, at(time.Second), at(7*time.Second)), lease("a", 2, nil, at(2*time.Second)), lease("a", 0, nil, nil),
		}, figures{Lag: 42, CheckpointAge: secs(1), OldestPending: secs(7)}},
		{"AnUnknownLagIsCountedApartAndNotCaughtUp", []changefeed.LeaseStatus{
			lease("a", -1, nil, nil), lease("a", 0, nil, nil),
		}, figures{Unknown: 1}},
		{"AnUnownedLeaseAtZeroIsNotCaughtUp", []changefeed.LeaseStatus{
			lease("", 0, at(time.Minute), nil), lease("a", 0, nil, nil),
		}, figures{Unowned: 1, CheckpointAge: secs(60), OldestPending: secs(0)}},
		{"BehindWithoutAnOldestPendingKnownIsNil", []changefeed.LeaseStatus{
			lease("other", 5, nil, nil),
		}, figures{Lag: 5}},
		{"SomeKnownIsALowerBound", []changefeed.LeaseStatus{
			lease("other", 5, nil, nil), lease("a", 1, nil, at(4*time.Second)),
		}, figures{Lag: 6, OldestPending: secs(4)}},
		{"AClockAheadIsNoNegativeAge", []changefeed.LeaseStatus{
			lease("a", 0, at(-2*time.Second), nil),
		}, figures{CaughtUp: true, CheckpointAge: secs(0), OldestPending: secs(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := changefeed.Summarize("products", tt.leases, now)
			got := figures{s.CaughtUp, s.LagEstimate, s.UnknownLeases, s.UnownedLeases, s.CheckpointAgeSeconds, s.OldestPendingSeconds}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
			if s.Processor != "products" || s.Leases == nil || len(s.Leases) != len(tt.leases) {
				t.Errorf("processor %q with %d leases, want products with %d", s.Processor, len(s.Leases), len(tt.leases))
			}
		})
	}
}

// TestStatusShowsTheOldestChangeNotApplied: while the handler holds a
// batch, the lease is behind by it and knows when its oldest change was
// written; once applied, the processor is caught up with nothing pending.
func TestStatusShowsTheOldestChangeNotApplied(t *testing.T) {
	st := newStore(t)
	release := make(chan struct{})
	cfg := testConfig("a", func(ctx context.Context, _ [][]byte) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	p := startProcessor(t, t.Context(), st, cfg)
	before := time.Now().Add(-time.Second)
	writeThing(t, st, "x")
	status := func() changefeed.ProcessorStatus {
		leases, err := p.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return changefeed.Summarize(p.Name(), leases, time.Now())
	}
	eventually(t, 10*time.Second, "the lease holding x behind", func() (bool, string) {
		s := status()
		return s.LagEstimate == 1 && !s.CaughtUp && s.OldestPendingSeconds != nil, fmt.Sprintf("%+v", s)
	})
	for _, l := range status().Leases {
		if l.LagEstimate > 0 && (l.OldestPending == nil || l.OldestPending.Before(before.Truncate(time.Second)) || l.OldestPending.After(time.Now())) {
			t.Errorf("lease %s behind by %d: oldest pending %v, want the time x was written", l.Lease, l.LagEstimate, l.OldestPending)
		}
	}
	close(release)
	eventually(t, 10*time.Second, "caught up", func() (bool, string) {
		s := status()
		return s.CaughtUp && s.LagEstimate == 0 && s.OldestPendingSeconds != nil && *s.OldestPendingSeconds == 0, fmt.Sprintf("%+v", s)
	})
}

// TestHeartbeatCarriesTheLag: the lag an owner sees reaches its lease
// document with the next heartbeat, without waiting for a checkpoint, so
// the other instances' Status shows it.
func TestHeartbeatCarriesTheLag(t *testing.T) {
	st := newStore(t)
	release := make(chan struct{})
	defer close(release)
	startProcessor(t, t.Context(), st, testConfig("a", func(ctx context.Context, _ [][]byte) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	writeThing(t, st, "x")
	eventually(t, 10*time.Second, "a stored lease behind by x before any checkpoint", func() (bool, string) {
		page, err := st.Container(store.LeasesContainer).Query(t.Context(), store.Query{
			Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: changefeed.TypeLease}},
			Limit:   100,
		})
		if err != nil {
			return false, err.Error()
		}
		var lags []string
		for _, it := range page.Items {
			l, _ := repo.Decode[struct {
				LagEstimate    int64      `json:"lagEstimate"`
				LastCheckpoint *time.Time `json:"lastCheckpoint"`
			}](it)
			if l.LagEstimate == 1 && l.LastCheckpoint == nil {
				return true, ""
			}
			lags = append(lags, fmt.Sprint(l.LagEstimate))
		}
		return false, fmt.Sprintf("stored lags %v", lags)
	})
}

// TestStatusOfOwnLeasesCostsNothing: the leases this instance holds are
// reported from memory, so polling the status of a processor holding
// every lease spends nothing of the lease container's throughput.
func TestStatusOfOwnLeasesCostsNothing(t *testing.T) {
	st := newStore(t)
	p := startProcessor(t, t.Context(), st, testConfig("a", func(context.Context, [][]byte) error { return nil }))
	var leases []changefeed.LeaseStatus
	eventually(t, 10*time.Second, "every lease held by a", func() (bool, string) {
		var err error
		if leases, err = p.Status(t.Context()); err != nil {
			return false, err.Error()
		}
		return len(leases) > 0 && len(p.Owned()) == len(leases), fmt.Sprintf("owned %v of %d", p.Owned(), len(leases))
	})
	ctx, m := store.WithMeter(t.Context())
	got, err := p.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ops, ru, _ := m.Totals(); ops != 0 || len(got) != len(leases) {
		t.Errorf("Status of %d leases held here: %d operations, %v RU, %d leases; want 0 operations, every lease", len(leases), ops, ru, len(got))
	}
	for _, l := range got {
		if l.Owner != "a" {
			t.Errorf("lease %s owned by %q, want a", l.Lease, l.Owner)
		}
	}
}
