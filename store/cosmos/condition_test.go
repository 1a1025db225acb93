package cosmos

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The patch conditions, one golden file each: the SQL filter predicate as
// Cosmos receives it. A change in rendering shows up as a diff in review.
var conditionShapes = []struct {
	name string
	cond store.Condition
}{
	// The inventory's take of n units: incr /available -n if available >= n.
	{"take_stock", store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: 3}}},
	{"every_operator", store.Condition{
		{Path: "a", Op: store.OpEqual, Value: 1},
		{Path: "b", Op: store.OpNotEqual, Value: 2},
		{Path: "c", Op: store.OpLess, Value: 3},
		{Path: "d", Op: store.OpLessOrEqual, Value: 4},
		{Path: "e", Op: store.OpGreater, Value: 5},
		{Path: "f", Op: store.OpGreaterOrEqual, Value: 6},
	}},
	{"numbers_of_every_kind", store.Condition{
		{Path: "neg", Op: store.OpGreater, Value: int64(-7)},
		{Path: "whole_float", Op: store.OpEqual, Value: 2.0},
		{Path: "fraction", Op: store.OpLess, Value: 0.25},
		{Path: "tiny", Op: store.OpGreater, Value: 1e-7},
		{Path: "big", Op: store.OpLess, Value: uint64(math.MaxUint64)},
		{Path: "decoded", Op: store.OpEqual, Value: json.Number("1e3")},
	}},
	{"status_and_stock", store.Condition{
		{Path: "status", Op: store.OpEqual, Value: "active"},
		{Path: "available", Op: store.OpGreaterOrEqual, Value: 1},
	}},
	{"reserved_word_property", store.Condition{{Path: "value", Op: store.OpGreater, Value: 0}}},
	// A hostile string stays one literal: quotes and backslashes escaped.
	{"hostile_string", store.Condition{{Path: "sku", Op: store.OpEqual, Value: `a' OR 1=1 OR c.sku = "b\` + "\n\x00\u2028é"}}},
}

func TestRenderConditionGolden(t *testing.T) {
	for _, tc := range conditionShapes {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderCondition(tc.cond)
			if err != nil {
				t.Fatalf("renderCondition: %v", err)
			}
			got += "\n"
			path := filepath.Join("testdata", "condition", tc.name+".sql")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./store/cosmos -run TestRenderConditionGolden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("rendered condition differs from %s:\n got: %s\nwant: %s", path, got, want)
			}
		})
	}
}

// There are no parameters for a patch condition, so anything that is not
// a plain name, one of the six operators, a finite number or a valid
// UTF-8 string is refused before any text is written.
func TestRenderConditionRefuses(t *testing.T) {
	tests := []struct {
		name string
		c    store.Comparison
	}{
		{"path with a quote", store.Comparison{Path: `n"]`, Op: store.OpEqual, Value: 1}},
		{"path with an injection", store.Comparison{Path: "n >= 0 OR c.n", Op: store.OpEqual, Value: 1}},
		{"nested path", store.Comparison{Path: "a.b", Op: store.OpEqual, Value: 1}},
		{"pointer path", store.Comparison{Path: "/available", Op: store.OpEqual, Value: 1}},
		{"empty path", store.Comparison{Path: "", Op: store.OpEqual, Value: 1}},
		{"leading digit", store.Comparison{Path: "1n", Op: store.OpEqual, Value: 1}},
		{"unknown operator", store.Comparison{Path: "n", Op: "LIKE", Value: "%"}},
		{"operator with text", store.Comparison{Path: "n", Op: "= 1 OR c.n =", Value: 1}},
		{"boolean value", store.Comparison{Path: "n", Op: store.OpEqual, Value: true}},
		{"null value", store.Comparison{Path: "n", Op: store.OpEqual, Value: nil}},
		{"array value", store.Comparison{Path: "n", Op: store.OpEqual, Value: []int{1}}},
		{"NaN", store.Comparison{Path: "n", Op: store.OpEqual, Value: math.NaN()}},
		{"infinity", store.Comparison{Path: "n", Op: store.OpLess, Value: math.Inf(1)}},
		{"json.Number that is not a number", store.Comparison{Path: "n", Op: store.OpEqual, Value: json.Number("1 OR true")}},
		{"invalid UTF-8", store.Comparison{Path: "n", Op: store.OpEqual, Value: "a\xffb"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCondition(store.Condition{tc.c})
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code = %q (%v), want %q", got, err, want)
			}
			_, err = conditionalPatch([]store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: -1}}, store.Condition{tc.c})
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("conditionalPatch: code = %q (%v), want %q", got, err, want)
			}
		})
	}
}

// azcosmos v1.5.0 writes the condition into the body unescaped; what the
// service decodes from the body must be exactly the rendered predicate,
// for every shape, hostile strings included, and the operations intact.
func TestConditionReachesTheServiceIntact(t *testing.T) {
	for _, tc := range conditionShapes {
		t.Run(tc.name, func(t *testing.T) {
			want, err := renderCondition(tc.cond)
			if err != nil {
				t.Fatal(err)
			}
			p, err := conditionalPatch([]store.PatchOp{{Op: store.PatchIncrement, Path: "/available", Value: -3}}, tc.cond)
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Condition  string           `json:"condition"`
				Operations []map[string]any `json:"operations"`
			}
			d := json.NewDecoder(strings.NewReader(string(body)))
			d.DisallowUnknownFields()
			if err := d.Decode(&got); err != nil {
				t.Fatalf("the patch body is not the JSON Cosmos expects: %v\n%s", err, body)
			}
			if got.Condition != want {
				t.Errorf("condition the service reads\n got: %s\nwant: %s", got.Condition, want)
			}
			if len(got.Operations) != 1 || got.Operations[0]["op"] != "incr" || got.Operations[0]["value"] != -3.0 {
				t.Errorf("operations = %v", got.Operations)
			}
		})
	}
}

// No condition: the body carries none, as before.
func TestUnconditionalPatchHasNoCondition(t *testing.T) {
	p, err := conditionalPatch([]store.PatchOp{{Op: store.PatchSet, Path: "/a", Value: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(p)
	if got, want := string(body), `{"operations":[{"op":"set","path":"/a","value":1}]}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
}

// A conditional patch in a batch that does not hold comes back as 412 on
// its operation and 424 on the others: EPRECONDITION, naming the patch.
func TestBatchResponseFailedCondition(t *testing.T) {
	ops := []store.BatchOp{
		{Kind: store.BatchPatch, ID: "stock", Patch: []store.PatchOp{{Op: store.PatchIncrement, Path: "/available", Value: -1}},
			Condition: store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: 1}}},
		{Kind: store.BatchCreate, Item: []byte(`{"id":"r1"}`)},
	}
	c := &Container{name: "inventory"}
	got, err := c.batchResponse(ops, azcosmos.TransactionalBatchResponse{
		OperationResults: []azcosmos.TransactionalBatchResult{{StatusCode: 412}, {StatusCode: 424}},
	})
	if code := domain.ErrorCode(err); code != domain.EPRECONDITION {
		t.Fatalf("code = %q (%v), want %q", code, err, domain.EPRECONDITION)
	}
	if msg := domain.ErrorMessage(err); !strings.Contains(msg, "operation 0 (patch)") || !strings.Contains(msg, "condition") {
		t.Errorf("message %q does not name the patch and its condition", msg)
	}
	if got.Committed || got.Results[0].Code != domain.EPRECONDITION || got.Results[1].Code != store.CodeFailedDependency {
		t.Errorf("response = %+v", got)
	}
}
