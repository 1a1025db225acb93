package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

func testPatch(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	base := func(id string) map[string]any {
		return map[string]any{
			"id": id, "pk": "p", "name": "a", "n": 1.0,
			"tags":   []any{"x", "y"},
			"nested": map[string]any{"a": 1.0},
		}
	}
	with := func(id string, change func(m map[string]any)) map[string]any {
		m := base(id)
		change(m)
		return m
	}
	op := func(kind, path string, v any) store.PatchOp { return store.PatchOp{Op: kind, Path: path, Value: v} }
	tests := []struct {
		name string
		ops  []store.PatchOp
		code string
		want func(id string) map[string]any // nil when the patch fails
	}{
		{name: "SetNew", ops: []store.PatchOp{op(store.PatchSet, "/color", "red")},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["color"] = "red" }) }},
		// A nil value sets JSON null; the property stays (Cosmos stores
		// the null it is sent).
		{name: "SetNull", ops: []store.PatchOp{op(store.PatchSet, "/name", nil)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["name"] = nil }) }},
		{name: "SetNullNew", ops: []store.PatchOp{op(store.PatchSet, "/color", nil)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["color"] = nil }) }},
		{name: "SetExisting", ops: []store.PatchOp{op(store.PatchSet, "/name", "b")},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["name"] = "b" }) }},
		{name: "SetNested", ops: []store.PatchOp{op(store.PatchSet, "/nested/b", 2)},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["nested"] = map[string]any{"a": 1.0, "b": 2.0} })
			}},
		{name: "SetArrayIndex", ops: []store.PatchOp{op(store.PatchSet, "/tags/0", "w")},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["tags"] = []any{"w", "y"} })
			}},
		{name: "ReplaceExisting", ops: []store.PatchOp{op(store.PatchReplace, "/n", 5)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["n"] = 5.0 }) }},
		{name: "ReplaceMissing", ops: []store.PatchOp{op(store.PatchReplace, "/missing", 5)}, code: domain.EINVALID},
		{name: "AddInsertsIntoArray", ops: []store.PatchOp{op(store.PatchAdd, "/tags/1", "z")},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["tags"] = []any{"x", "z", "y"} })
			}},
		{name: "AddAppendsToArray", ops: []store.PatchOp{op(store.PatchAdd, "/tags/-", "z")},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["tags"] = []any{"x", "y", "z"} })
			}},
		{name: "AddProperty", ops: []store.PatchOp{op(store.PatchAdd, "/nested/c", true)},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["nested"] = map[string]any{"a": 1.0, "c": true} })
			}},
		{name: "RemoveProperty", ops: []store.PatchOp{op(store.PatchRemove, "/name", nil)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { delete(m, "name") }) }},
		{name: "RemoveArrayElement", ops: []store.PatchOp{op(store.PatchRemove, "/tags/0", nil)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["tags"] = []any{"y"} }) }},
		{name: "RemoveMissing", ops: []store.PatchOp{op(store.PatchRemove, "/missing", nil)}, code: domain.EINVALID},
		{name: "IncrementInteger", ops: []store.PatchOp{op(store.PatchIncrement, "/n", 2)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["n"] = 3.0 }) }},
		// Whole numbers only: azcosmos's AppendIncrement takes an int64.
		{name: "IncrementFractionRefused", ops: []store.PatchOp{op(store.PatchIncrement, "/n", 0.5)}, code: domain.EINVALID},
		{name: "IncrementWholeFloat", ops: []store.PatchOp{op(store.PatchIncrement, "/n", 2.0)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["n"] = 3.0 }) }},
		{name: "IncrementNegative", ops: []store.PatchOp{op(store.PatchIncrement, "/nested/a", -3)},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["nested"] = map[string]any{"a": -2.0} })
			}},
		{name: "IncrementCreatesMissing", ops: []store.PatchOp{op(store.PatchIncrement, "/count", 1)},
			want: func(id string) map[string]any { return with(id, func(m map[string]any) { m["count"] = 1.0 }) }},
		{name: "IncrementNotANumber", ops: []store.PatchOp{op(store.PatchIncrement, "/name", 1)}, code: domain.EINVALID},
		{name: "ParentMissing", ops: []store.PatchOp{op(store.PatchSet, "/nope/x", 1)}, code: domain.EINVALID},
		{name: "IndexOutOfRange", ops: []store.PatchOp{op(store.PatchReplace, "/tags/9", "z")}, code: domain.EINVALID},
		{name: "PartitionKeyCannotChange", ops: []store.PatchOp{op(store.PatchSet, "/pk", "q")}, code: domain.EINVALID},
		{name: "NotAPointer", ops: []store.PatchOp{op(store.PatchSet, "name", "b")}, code: domain.EINVALID},
		{name: "SeveralOpsInOrder", ops: []store.PatchOp{
			op(store.PatchSet, "/name", "b"), op(store.PatchIncrement, "/n", 1), op(store.PatchAdd, "/tags/-", "z"),
		},
			want: func(id string) map[string]any {
				return with(id, func(m map[string]any) { m["name"], m["n"], m["tags"] = "b", 2.0, []any{"x", "y", "z"} })
			}},
		{name: "AllOrNothing", ops: []store.PatchOp{
			op(store.PatchSet, "/name", "b"), op(store.PatchReplace, "/missing", 1),
		}, code: domain.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			created := mustCreate(t, c, "p", mustJSON(t, base(tt.name)))
			r, err := c.Patch(ctx, "p", tt.name, tt.ops, nil)
			wantCode(t, "Patch", err, tt.code)
			stored := userFields(mustRead(t, c, "p", tt.name))
			if tt.want == nil {
				if diff := cmp.Diff(userFields(decode(t, created.Item)), stored); diff != "" {
					t.Errorf("a failed patch changed the item (-before +after):\n%s", diff)
				}
				return
			}
			charged(t, "Patch", r.RequestCharge)
			if diff := cmp.Diff(tt.want(tt.name), userFields(decode(t, r.Item))); diff != "" {
				t.Errorf("patched item (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want(tt.name), stored); diff != "" {
				t.Errorf("item read after the patch (-want +got):\n%s", diff)
			}
		})
	}
}
