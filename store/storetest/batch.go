package storetest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// statusCodes lists the per-operation results of a batch.
func statusCodes(r store.BatchResponse) (statuses []int, codes []string) {
	for _, res := range r.Results {
		statuses = append(statuses, res.StatusCode)
		codes = append(codes, res.Code)
	}
	return statuses, codes
}

func testBatchAtomic(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	existing := mustCreate(t, c, "p", item("p", "existing", "n", 1))
	mustCreate(t, c, "p", item("p", "doomed", "n", 1))

	t.Run("FailureRollsBackAll", func(t *testing.T) {
		r, err := c.ExecuteBatch(ctx, "p", []store.BatchOp{
			{Kind: store.BatchCreate, Item: item("p", "x")},
			{Kind: store.BatchDelete, ID: "doomed"},
			{Kind: store.BatchReplace, ID: "existing", Item: item("p", "existing", "n", 2), IfMatch: `"stale"`},
		})
		wantCode(t, "batch with a stale If-Match", err, domain.EPRECONDITION)
		if r.Committed {
			t.Errorf("Committed = true, want false")
		}
		statuses, codes := statusCodes(r)
		if diff := cmp.Diff([]int{http.StatusFailedDependency, http.StatusFailedDependency, http.StatusPreconditionFailed}, statuses); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"failed_dependency", "failed_dependency", domain.EPRECONDITION}, codes); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
		_, err = c.Read(ctx, "p", "x")
		wantCode(t, "item the rolled-back batch created", err, domain.ENOTFOUND)
		mustRead(t, c, "p", "doomed")
	})

	t.Run("SuccessCommitsAll", func(t *testing.T) {
		r, err := c.ExecuteBatch(ctx, "p", []store.BatchOp{
			{Kind: store.BatchCreate, Item: item("p", "x", "n", 1)},
			{Kind: store.BatchUpsert, Item: item("p", "y", "n", 1)},
			{Kind: store.BatchReplace, ID: "existing", Item: item("p", "existing", "n", 2), IfMatch: existing.ETag},
			{Kind: store.BatchDelete, ID: "doomed"},
		})
		wantCode(t, "batch", err, "")
		charged(t, "ExecuteBatch", r.RequestCharge)
		if !r.Committed {
			t.Fatalf("Committed = false, want true")
		}
		statuses, codes := statusCodes(r)
		if diff := cmp.Diff([]int{201, 201, 200, 204}, statuses); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"", "", "", ""}, codes); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
		want := map[string]float64{"x": 1, "y": 1, "existing": 2}
		for id, n := range want {
			if got := mustRead(t, c, "p", id)["n"]; got != n {
				t.Errorf("after the batch %s.n = %v, want %v", id, got, n)
			}
		}
		_, err = c.Read(ctx, "p", "doomed")
		wantCode(t, "item the batch deleted", err, domain.ENOTFOUND)
	})
}

func testBatchAcrossKeys(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	r, err := c.ExecuteBatch(ctx, "p1", []store.BatchOp{
		{Kind: store.BatchCreate, Item: item("p1", "a")},
		{Kind: store.BatchCreate, Item: item("p2", "b")},
	})
	wantCode(t, "batch with an item of another partition key", err, domain.EINVALID)
	if r.Committed {
		t.Errorf("Committed = true, want false")
	}
	_, err = c.Read(ctx, "p1", "a")
	wantCode(t, "item of the refused batch", err, domain.ENOTFOUND)
	_, err = c.Read(ctx, "p2", "b")
	wantCode(t, "item of the refused batch", err, domain.ENOTFOUND)
}

func testBatchOver100(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	ops := func(n int) []store.BatchOp {
		var out []store.BatchOp
		for i := range n {
			out = append(out, store.BatchOp{Kind: store.BatchCreate, Item: item("p", fmt.Sprintf("n%d-%03d", n, i))})
		}
		return out
	}
	_, err := c.ExecuteBatch(ctx, "p", ops(store.MaxBatchOps+1))
	wantCode(t, "batch of 101", err, domain.EINVALID)
	_, err = c.Read(ctx, "p", "n101-000")
	wantCode(t, "first item of the refused batch", err, domain.ENOTFOUND)
	r, err := c.ExecuteBatch(ctx, "p", ops(store.MaxBatchOps))
	wantCode(t, "batch of 100", err, "")
	if !r.Committed || len(r.Results) != store.MaxBatchOps {
		t.Errorf("batch of 100: Committed = %v with %d results, want true with 100", r.Committed, len(r.Results))
	}
}

// testBatchOver2MB: a batch is held to 2 MB in all (store.BatchSize),
// however small each of its items is; Cosmos answers 413.
func testBatchOver2MB(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	blob := strings.Repeat("x", 800*1024)
	var ops []store.BatchOp
	for i := range 3 {
		ops = append(ops, store.BatchOp{Kind: store.BatchCreate, Item: item("p", fmt.Sprintf("big%d", i), "blob", blob)})
	}
	r, err := c.ExecuteBatch(ctx, "p", ops)
	wantCode(t, "batch of three 800 KB items", err, domain.ETOOLARGE)
	if r.Committed {
		t.Errorf("Committed = true, want false")
	}
	_, err = c.Read(ctx, "p", "big0")
	wantCode(t, "first item of the refused batch", err, domain.ENOTFOUND)
	r, err = c.ExecuteBatch(ctx, "p", ops[:2])
	wantCode(t, "batch of two 800 KB items", err, "")
	if !r.Committed {
		t.Errorf("batch of two 800 KB items: Committed = false, want true")
	}
}

// testPatchOver10Ops: a patch holds at most 10 operations, alone or in a
// batch; Cosmos answers 400 for more.
func testPatchOver10Ops(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p", item("p", "a", "n", 0))
	ops := func(n int) []store.PatchOp {
		var out []store.PatchOp
		for i := range n {
			out = append(out, store.PatchOp{Op: store.PatchSet, Path: fmt.Sprintf("/f%d", i), Value: i})
		}
		return out
	}
	_, err := c.Patch(ctx, "p", "a", ops(store.MaxPatchOps+1), nil)
	wantCode(t, "Patch of 11 operations", err, domain.EINVALID)
	_, err = c.ExecuteBatch(ctx, "p", []store.BatchOp{{Kind: store.BatchPatch, ID: "a", Patch: ops(store.MaxPatchOps + 1)}})
	wantCode(t, "batch patch of 11 operations", err, domain.EINVALID)
	if _, ok := mustRead(t, c, "p", "a")["f0"]; ok {
		t.Errorf("a refused patch set /f0")
	}
	_, err = c.Patch(ctx, "p", "a", ops(store.MaxPatchOps), nil)
	wantCode(t, "Patch of 10 operations", err, "")
}
