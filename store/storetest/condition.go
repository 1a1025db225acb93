package storetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// take is the inventory's write: incr /available -n if available >= n.
func take(n int) ([]store.PatchOp, store.Condition) {
	return []store.PatchOp{{Op: store.PatchIncrement, Path: "/available", Value: -n}},
		store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: n}}
}

func testConditionalPatch(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)

	t.Run("HoldsThenFails", func(t *testing.T) {
		mustCreate(t, c, "p", item("p", "stock", "available", 5))
		ops, cond := take(3)
		r, err := c.Patch(ctx, "p", "stock", ops, &store.PatchOptions{Condition: cond})
		wantCode(t, "take 3 of 5", err, "")
		charged(t, "conditional Patch", r.RequestCharge)
		if got := decode(t, r.Item)["available"]; got != 2.0 {
			t.Errorf("patched available = %v, want 2", got)
		}
		before, err := c.Read(ctx, "p", "stock")
		wantCode(t, "Read", err, "")
		_, err = c.Patch(ctx, "p", "stock", ops, &store.PatchOptions{Condition: cond})
		wantCode(t, "take 3 of 2", err, domain.EPRECONDITION)
		after, err := c.Read(ctx, "p", "stock")
		wantCode(t, "Read", err, "")
		if after.ETag != before.ETag || decode(t, after.Item)["available"] != 2.0 {
			t.Errorf("a refused conditional patch changed the item: %s", after.Item)
		}
	})

	t.Run("Operators", func(t *testing.T) {
		mustCreate(t, c, "p", item("p", "ops", "available", 2, "price", 2.5, "sku", "b"))
		cmpOf := func(path, op string, v any) store.Comparison { return store.Comparison{Path: path, Op: op, Value: v} }
		tests := []struct {
			name  string
			cond  store.Condition
			holds bool
		}{
			{"Equal", store.Condition{cmpOf("available", store.OpEqual, 2)}, true},
			{"EqualFails", store.Condition{cmpOf("available", store.OpEqual, 3)}, false},
			{"NotEqual", store.Condition{cmpOf("available", store.OpNotEqual, 3)}, true},
			{"NotEqualFails", store.Condition{cmpOf("available", store.OpNotEqual, 2)}, false},
			{"Less", store.Condition{cmpOf("available", store.OpLess, 3)}, true},
			{"LessFails", store.Condition{cmpOf("available", store.OpLess, 2)}, false},
			{"LessOrEqual", store.Condition{cmpOf("available", store.OpLessOrEqual, 2)}, true},
			{"Greater", store.Condition{cmpOf("available", store.OpGreater, 1)}, true},
			{"GreaterFails", store.Condition{cmpOf("available", store.OpGreater, 2)}, false},
			{"GreaterOrEqual", store.Condition{cmpOf("available", store.OpGreaterOrEqual, 2)}, true},
			{"Fraction", store.Condition{cmpOf("price", store.OpGreater, 2.25)}, true},
			{"IntegerAgainstFraction", store.Condition{cmpOf("price", store.OpLess, 3)}, true},
			{"String", store.Condition{cmpOf("sku", store.OpEqual, "b")}, true},
			{"StringOrder", store.Condition{cmpOf("sku", store.OpGreater, "a")}, true},
			{"StringFails", store.Condition{cmpOf("sku", store.OpEqual, "B")}, false},
			{"AllMustHold", store.Condition{cmpOf("sku", store.OpEqual, "b"), cmpOf("available", store.OpGreaterOrEqual, 3)}, false},
			{"AllHold", store.Condition{cmpOf("sku", store.OpEqual, "b"), cmpOf("available", store.OpGreaterOrEqual, 1)}, true},
			// Cosmos SQL: another type or a missing property is undefined,
			// and undefined never holds, not even for !=.
			{"NumberAgainstString", store.Condition{cmpOf("available", store.OpEqual, "2")}, false},
			{"StringAgainstNumber", store.Condition{cmpOf("sku", store.OpNotEqual, 1)}, false},
			{"MissingProperty", store.Condition{cmpOf("reserved", store.OpLess, 100)}, false},
			{"MissingPropertyNotEqual", store.Condition{cmpOf("reserved", store.OpNotEqual, 1)}, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				want := domain.EPRECONDITION
				if tt.holds {
					want = ""
				}
				ops := []store.PatchOp{{Op: store.PatchIncrement, Path: "/checks", Value: 1}}
				_, err := c.Patch(ctx, "p", "ops", ops, &store.PatchOptions{Condition: tt.cond})
				wantCode(t, fmt.Sprintf("patch if %v", tt.cond), err, want)
			})
		}
	})

	t.Run("WithIfMatch", func(t *testing.T) {
		created := mustCreate(t, c, "p", item("p", "both", "available", 5))
		ops, cond := take(1)
		_, err := c.Patch(ctx, "p", "both", ops, &store.PatchOptions{IfMatch: `"stale"`, Condition: cond})
		wantCode(t, "condition holds, If-Match stale", err, domain.EPRECONDITION)
		_, err = c.Patch(ctx, "p", "both", ops, &store.PatchOptions{IfMatch: created.ETag, Condition: cond})
		wantCode(t, "condition holds, If-Match current", err, "")
		if got := mustRead(t, c, "p", "both")["available"]; got != 4.0 {
			t.Errorf("available = %v, want 4", got)
		}
	})

	t.Run("InvalidCondition", func(t *testing.T) {
		mustCreate(t, c, "p", item("p", "invalid", "available", 5))
		ops, _ := take(1)
		for name, cond := range map[string]store.Condition{
			"NestedPath":      {{Path: "a.b", Op: store.OpEqual, Value: 1}},
			"InjectedPath":    {{Path: "available >= 0 OR c.available", Op: store.OpGreaterOrEqual, Value: 1}},
			"UnknownOperator": {{Path: "available", Op: "LIKE", Value: "%"}},
			"BooleanValue":    {{Path: "available", Op: store.OpEqual, Value: true}},
			"NullValue":       {{Path: "available", Op: store.OpEqual, Value: nil}},
		} {
			_, err := c.Patch(ctx, "p", "invalid", ops, &store.PatchOptions{Condition: cond})
			wantCode(t, "patch with the condition "+name, err, domain.EINVALID)
		}
		if got := mustRead(t, c, "p", "invalid")["available"]; got != 5.0 {
			t.Errorf("after refused patches available = %v, want 5", got)
		}
	})

	t.Run("MissingItem", func(t *testing.T) {
		ops, cond := take(1)
		_, err := c.Patch(ctx, "p", "nothing", ops, &store.PatchOptions{Condition: cond})
		wantCode(t, "conditional patch of a missing item", err, domain.ENOTFOUND)
	})
}

// The inventory's batch: take the stock and create the reservation in one
// transaction of the product's logical partition. Both or neither.
func testConditionalBatch(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p", item("p", "stock", "available", 1))
	takeAndReserve := func(id string) []store.BatchOp {
		ops, cond := take(1)
		return []store.BatchOp{
			{Kind: store.BatchPatch, ID: "stock", Patch: ops, Condition: cond},
			{Kind: store.BatchCreate, Item: item("p", id, "units", 1)},
		}
	}

	r, err := c.ExecuteBatch(ctx, "p", takeAndReserve("r1"))
	wantCode(t, "take the last unit and reserve it", err, "")
	charged(t, "ExecuteBatch", r.RequestCharge)
	if !r.Committed {
		t.Fatalf("Committed = false, want true")
	}
	statuses, _ := statusCodes(r)
	if diff := cmp.Diff([]int{http.StatusOK, http.StatusCreated}, statuses); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
	if got := decode(t, r.Results[0].Item)["available"]; got != 0.0 {
		t.Errorf("the patch's result has available = %v, want 0", got)
	}
	mustRead(t, c, "p", "r1")

	t.Run("FailedConditionCommitsNothing", func(t *testing.T) {
		r, err := c.ExecuteBatch(ctx, "p", takeAndReserve("r2"))
		wantCode(t, "take from an empty stock", err, domain.EPRECONDITION)
		if r.Committed {
			t.Errorf("Committed = true, want false")
		}
		statuses, codes := statusCodes(r)
		if diff := cmp.Diff([]int{http.StatusPreconditionFailed, http.StatusFailedDependency}, statuses); diff != "" {
			t.Errorf("status codes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{domain.EPRECONDITION, store.CodeFailedDependency}, codes); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
		_, err = c.Read(ctx, "p", "r2")
		wantCode(t, "the reservation of the refused batch", err, domain.ENOTFOUND)
	})

	t.Run("FailedConditionRollsBackEarlierWrites", func(t *testing.T) {
		ops := takeAndReserve("r3")
		ops[0], ops[1] = ops[1], ops[0]
		r, err := c.ExecuteBatch(ctx, "p", ops)
		wantCode(t, "reserve, then take from an empty stock", err, domain.EPRECONDITION)
		_, codes := statusCodes(r)
		if diff := cmp.Diff([]string{store.CodeFailedDependency, domain.EPRECONDITION}, codes); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
		_, err = c.Read(ctx, "p", "r3")
		wantCode(t, "the reservation the failed condition rolled back", err, domain.ENOTFOUND)
	})

	t.Run("InvalidCondition", func(t *testing.T) {
		ops := takeAndReserve("r4")
		ops[0].Condition = store.Condition{{Path: "available", Op: "=>", Value: 1}}
		r, err := c.ExecuteBatch(ctx, "p", ops)
		wantCode(t, "batch with an invalid condition", err, domain.EINVALID)
		if r.Committed {
			t.Errorf("Committed = true, want false")
		}
		_, err = c.Read(ctx, "p", "r4")
		wantCode(t, "the reservation of the refused batch", err, domain.ENOTFOUND)
	})

	if got := mustRead(t, c, "p", "stock")["available"]; got != 0.0 {
		t.Errorf("available at the end = %v, want 0", got)
	}
}

// N takers race for a stock of K < N units, one unit each, with nothing
// but the conditional write: exactly K win, the others are EPRECONDITION,
// and the stock ends at 0, never below. The same race through the batch
// leaves exactly K reservations.
func testConditionalConcurrent(t *testing.T, s store.Store) {
	const stock, takers = 5, 24
	c := newContainer(t, s, nil)
	for _, viaBatch := range []bool{false, true} {
		name := map[bool]string{false: "Patch", true: "Batch"}[viaBatch]
		t.Run(name, func(t *testing.T) {
			id := "stock-" + name
			mustCreate(t, c, "p", item("p", id, "available", stock))
			codes := make([]string, takers)
			var wg sync.WaitGroup
			for i := range takers {
				wg.Go(func() {
					codes[i] = takeOne(t, c, id, fmt.Sprintf("%s-r%02d", name, i), viaBatch)
				})
			}
			wg.Wait()
			won := 0
			for i, code := range codes {
				switch code {
				case "":
					won++
				case domain.EPRECONDITION:
				default:
					t.Errorf("taker %d: code %q, want success or %q", i, code, domain.EPRECONDITION)
				}
			}
			if won != stock {
				t.Errorf("%d takers succeeded, want exactly %d", won, stock)
			}
			if got := mustRead(t, c, "p", id)["available"]; got != 0.0 {
				t.Errorf("available after the race = %v, want 0", got)
			}
			if viaBatch {
				page, err := c.Query(ctx, store.Query{PartitionKey: "p", Limit: store.MaxQueryPageSize,
					Filters: []store.Filter{{Path: "units", Op: store.OpEqual, Value: 1}}})
				wantCode(t, "query the reservations", err, "")
				if len(page.Items) != stock {
					t.Errorf("%d reservations, want %d", len(page.Items), stock)
				}
			}
		})
	}
}

// takeOne takes one unit and returns the error code ("" when it won). A
// store that asks for a retry (429, or 449 for a write racing another on
// the same item) is retried, as a client would; that is not a loss.
func takeOne(t *testing.T, c store.Container, id, reservation string, viaBatch bool) string {
	ops, cond := take(1)
	for range 20 {
		var err error
		if viaBatch {
			_, err = c.ExecuteBatch(ctx, "p", []store.BatchOp{
				{Kind: store.BatchPatch, ID: id, Patch: ops, Condition: cond},
				{Kind: store.BatchCreate, Item: item("p", reservation, "units", 1)},
			})
		} else {
			var r store.ItemResponse
			r, err = c.Patch(ctx, "p", id, ops, &store.PatchOptions{Condition: cond})
			if err == nil {
				// Not decode: it may t.Fatal, which a goroutine must not.
				var doc struct{ Available float64 }
				if jerr := json.Unmarshal(r.Item, &doc); jerr != nil || doc.Available < 0 {
					t.Errorf("a take returned %s (%v): available must stay >= 0", r.Item, jerr)
				}
			}
		}
		if domain.ErrorCode(err) != domain.EUNAVAILABLE {
			return domain.ErrorCode(err)
		}
	}
	return domain.EUNAVAILABLE
}
