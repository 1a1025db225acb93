package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

func TestReadPoll(t *testing.T) {
	decode := func(body string) client.FeedStatus {
		var s client.FeedStatus
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	behind := decode(`{"processors": [
		{"processor": "products", "caughtUp": false, "lagEstimate": 40, "unknownLeases": 1, "unownedLeases": 0, "oldestPendingSeconds": 7.5,
		 "leases": [{"lease": "products.a", "owner": "vm-1"}, {"lease": "products.b", "owner": "vm-1"}]},
		{"processor": "reviews", "caughtUp": true, "lagEstimate": 0, "oldestPendingSeconds": 0,
		 "leases": [{"lease": "reviews.a", "owner": "vm-2"}, {"lease": "reviews.b", "owner": ""}]}]}`)
	got := readPoll(behind)
	if got.caughtUp || got.lag != 40 || got.oldestPending != 7.5 || !cmp.Equal(got.owners, []string{"vm-1", "vm-2"}) ||
		!cmp.Equal(got.behind, []string{"products 40 changes behind (1 leases unknown, 0 unowned)"}) {
		t.Errorf("readPoll = %+v", got)
	}
	caughtUp := readPoll(decode(`{"processors": [
		{"processor": "products", "caughtUp": true, "leases": [{"lease": "products.a", "owner": "vm-1"}]},
		{"processor": "reviews", "caughtUp": true, "leases": [{"lease": "reviews.a", "owner": "vm-2"}]}]}`))
	tests := []struct {
		name string
		poll feedPoll
		gone map[string]bool
		want bool
	}{
		{"EveryProcessorCaughtUp", caughtUp, nil, true},
		{"OneBehind", got, nil, false},
		{"NoProcessorIsNotCaughtUp", readPoll(decode(`{"processors": []}`)), nil, false},
		{"ALeaseStillHeldByTheKilledProcess", caughtUp, map[string]bool{"vm-2": true}, false},
		{"TheKilledProcessHoldsNothing", caughtUp, map[string]bool{"vm-9": true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.poll.settled(tt.gone); got != tt.want {
				t.Errorf("settled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStreakNeedsAnswersInARow(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	s := streak{need: 3}
	answers := []bool{true, true, false, true, true, true, true}
	done := -1
	for i, ok := range answers {
		if s.add(start.Add(time.Duration(i)*time.Second), ok) {
			done = i
			break
		}
	}
	if done != 5 || !s.since.Equal(start.Add(3*time.Second)) {
		t.Errorf("done after answer %d, since %v; want after answer 5, since the answer at 3 s (the first of the three)", done, s.since)
	}
}

func TestBurstWritesEveryChange(t *testing.T) {
	p := burstPlan{Category: "books", NewName: "Books, renamed", Moves: []string{"p-1", "p-2", "p-3"},
		Prices: []hotProduct{{ID: "p-9", PriceCents: 100}, {ID: "p-8", PriceCents: 200}}}
	if got, want := len(p.writes()), 3+1+2; got != want {
		t.Errorf("%d writes, want %d: the moves, the rename and the price changes", got, want)
	}
}

// sampleConvergence is a report as runConvergence fills it.
func sampleConvergence() convergenceReport {
	r := convergenceReport{
		Command: "go run ./cmd/shop bench --convergence --write-docs docs/reliability.md", Target: "shop serve",
		DataSet: "sample data", HotCarts: 200, LeaseExpiry: "10s",
		Plan: burstPlan{Category: "books", OldName: "Books", NewName: "Books, renamed", CategoryProducts: 250,
			Moves: make([]string, 50), Prices: make([]hotProduct, 10)},
		Runs: []convergenceRun{
			{Situation: "plain shop", Writes: 61, Answered: 61, Sent: 61, BurstMillis: 120, ConvergenceMillis: 2345, PeakLag: 80,
				Audit: auditResult{Documents: 9000, Operations: 300, RequestUnits: 4000}},
			{Situation: "throttled, 400 RU/s per container", Throughput: 400, Writes: 61, Answered: 61, Sent: 90,
				NotCaughtUp: "not caught up after 5m0s (last answer: products 65 changes behind)",
				Audit:       auditResult{Differences: 7, ByCopy: map[string]int{"carts.line": 5, "productsByTerm": 2}, Examples: []string{"carts.line carts/u/u: line p-1"}}},
			{Situation: "kill -9", Killed: true, Writes: 61, Answered: 30, Sent: 34, ConvergenceMillis: 10500, ListenMillis: 40, TakeoverMillis: 9600,
				Audit: auditResult{Differences: 2, ByCopy: map[string]int{"carts.line": 1, "ordersByStatus": 1},
					Examples: []string{"carts.line carts/v/v: line p-2", "ordersByStatus ordersByStatus/d/o: missing"}}},
		},
	}
	r.Goals = convergenceGoals(r.Runs)
	return r
}

func TestConvergenceMarkdown(t *testing.T) {
	r := sampleConvergence()
	var b bytes.Buffer
	writeConvergenceMarkdown(&b, r)
	md := b.String()
	for _, want := range []string{
		"Reproduce: `go run ./cmd/shop bench --convergence --write-docs docs/reliability.md`",
		"| plain shop | 61 of 61 (61 requests) | 0.1 s | **2.3 s after the last write** |",
		"| **not caught up after 5m0s (last answer: products 65 changes behind)** |",
		"**7** (carts.line 5, productsByTerm 2)",
		"30 of 61 before the kill (34 requests)",
		"**10.5 s after the restart (listening after 0.04 s, the killed process's leases taken over after 9.6 s)**",
		"- throttled, 400 RU/s per container: `carts.line carts/u/u: line p-1`",
		"| copies differing from their sources once the feeds caught up (plain shop) | = 0 | 0 | met |",
		"| copies differing from their sources once the feeds caught up (throttled, 400 RU/s per container) | = 0 | 7 | MISSED |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(md, "- kill -9: `ordersByStatus ordersByStatus/d/o: missing`") || strings.Contains(md, "carts/v/v") {
		t.Errorf("examples: want the first difference of each kind of copy over the runs, once:\n%s", md)
	}
	if g := r.Goals[0]; !g.Met {
		t.Errorf("goal of the plain run %+v: caught up with no difference, want met", g)
	}
}

// TestConvergenceSectionOfTheDoc: --write-docs replaces the generated
// section of docs/reliability.md and leaves the rest of the file alone.
func TestConvergenceSectionOfTheDoc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reliability.md")
	before := "# Reliability\n\nprose before\n\n<!-- begin: shop bench convergence (generated) -->\nold figures\n<!-- end: shop bench convergence -->\n\nprose after\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sampleConvergence()
	var out bytes.Buffer
	if err := report.Write(&out, r, report.Output{Docs: path}, "bench convergence",
		func(w io.Writer) { writeConvergenceMarkdown(w, r) }, func(w io.Writer) { writeConvergenceText(w, r) }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if strings.Contains(doc, "old figures") || !strings.HasPrefix(doc, "# Reliability\n\nprose before\n\n<!-- begin: shop bench convergence (generated) -->\n### How long") ||
		!strings.HasSuffix(doc, "<!-- end: shop bench convergence -->\n\nprose after\n") {
		t.Errorf("doc after --write-docs:\n%s", doc)
	}
}

// TestConvergence runs `shop bench --convergence` on a small data set,
// throttled lightly so that the run stays short: every situation measured
// and caught up, the killed process's leases taken over after the restart,
// each file audited. The audit's differences are reported, not judged
// here (TestEveryCopyConverges in cmd/shop is the property).
func TestConvergence(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the shop: skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "shop")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/reference-shop/shop/cmd/shop").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	args := []string{"--convergence", "--json", "--shop", bin, "--products", "40", "--users", "20", "--reviews", "40", "--throughput", "4000"}
	if err := Run(context.Background(), args, noEnv, &out); err != nil {
		t.Fatalf("shop bench --convergence: %v", err)
	}
	var rep convergenceReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, out.String())
	}
	if len(rep.Runs) != 3 {
		t.Fatalf("%d runs, want the plain, throttled and killed shops", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.NotCaughtUp != "" || r.Answered == 0 || r.Polls == 0 || r.Audit.Documents == 0 {
			t.Errorf("%s: %+v; want the burst answered, the feeds caught up and the file audited", r.Situation, r)
		}
		if r.Audit.Differences > 0 {
			t.Logf("%s: the audit found %d copies differing: %v %v", r.Situation, r.Audit.Differences, r.Audit.ByCopy, r.Audit.Examples)
		}
	}
	if k := rep.Runs[2]; !k.Killed || k.Answered >= k.Writes || k.TakeoverMillis <= 0 || k.ConvergenceMillis < k.TakeoverMillis {
		t.Errorf("killed run %+v: want the kill before the burst's end, the leases taken over after the restart, caught up after that", k)
	}
}
