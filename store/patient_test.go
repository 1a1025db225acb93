package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// throttling is a container whose first calls fail with err.
type throttling struct {
	store.Container
	fail  int
	err   error
	calls int
}

func (c *throttling) Read(context.Context, string, string) (store.ItemResponse, error) {
	c.calls++
	if c.calls <= c.fail {
		return store.ItemResponse{}, c.err
	}
	return store.ItemResponse{Item: []byte(`{}`)}, nil
}

type oneContainer struct {
	store.Store
	c store.Container
}

func (s oneContainer) Container(string) store.Container { return s.c }

func TestPatientRidesThrottlesOnly(t *testing.T) {
	throttled := &domain.Error{Code: domain.EUNAVAILABLE, Message: "429", RetryAfter: time.Millisecond}
	unavailable := domain.Errorf(domain.EUNAVAILABLE, "503")
	for _, tc := range []struct {
		name      string
		fail      int
		err       error
		wantCalls int
		wantErr   bool
	}{
		{"a throttle is waited out", 3, throttled, 4, false},
		{"past its patience the throttle goes back", store.MaxPatience + 5, throttled, store.MaxPatience + 1, true},
		{"an unavailable store goes back at once: the call may have been carried out", 1, unavailable, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &throttling{fail: tc.fail, err: tc.err}
			_, err := store.Patient(oneContainer{c: c}).Container("x").Read(store.WithPatience(t.Context()), "pk", "id")
			if (err != nil) != tc.wantErr || c.calls != tc.wantCalls {
				t.Errorf("err %v after %d calls, want error %v after %d", err, c.calls, tc.wantErr, tc.wantCalls)
			}
		})
	}
}

// TestPatienceIsTheCallersChoice: one Patient store serves the feed
// workers, whose contexts ask for patience, and the API, whose requests
// answer a throttle with 503 and Retry-After at once.
func TestPatienceIsTheCallersChoice(t *testing.T) {
	throttled := &domain.Error{Code: domain.EUNAVAILABLE, Message: "429", RetryAfter: time.Millisecond}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		wantCalls int
		wantErr   bool
	}{
		{"a request's context gets the throttle back", t.Context(), 1, true},
		{"a worker's context waits it out", store.WithPatience(t.Context()), 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &throttling{fail: 2, err: throttled}
			_, err := store.Patient(oneContainer{c: c}).Container("x").Read(tc.ctx, "pk", "id")
			if (err != nil) != tc.wantErr || c.calls != tc.wantCalls {
				t.Errorf("err %v after %d calls, want error %v after %d", err, c.calls, tc.wantErr, tc.wantCalls)
			}
		})
	}
}
