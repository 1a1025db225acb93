package cosmos

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// A failed batch is no Go error from the SDK: the per-operation statuses
// say what happened. These cases are the shapes Cosmos answers with.
func TestBatchResponse(t *testing.T) {
	ops := []store.BatchOp{
		{Kind: store.BatchCreate, Item: []byte(`{"id":"o1"}`)},
		{Kind: store.BatchCreate, Item: []byte(`{"id":"idem-k1"}`)},
		{Kind: store.BatchReplace, ID: "summary", Item: []byte(`{"id":"summary"}`), IfMatch: `"1"`},
	}
	tests := []struct {
		name      string
		resp      azcosmos.TransactionalBatchResponse
		want      store.BatchResponse
		wantCode  string
		wantInMsg string
	}{
		{
			name: "committed",
			resp: azcosmos.TransactionalBatchResponse{
				Success:  true,
				Response: azcosmos.Response{RequestCharge: 31.5},
				OperationResults: []azcosmos.TransactionalBatchResult{
					{StatusCode: 201, ETag: `"a"`, ResourceBody: []byte(`{"id":"o1","_etag":"\"a\"","_rid":"x"}`)},
					{StatusCode: 201, ResourceBody: []byte(`{"id":"idem-k1","_etag":"\"b\""}`)},
					{StatusCode: 200, ETag: `"c"`},
				},
			},
			want: store.BatchResponse{
				Committed:     true,
				RequestCharge: 31.5,
				Results: []store.BatchResult{
					{StatusCode: 201, ETag: `"a"`, Item: []byte(`{"_etag":"\"a\"","id":"o1"}`)},
					{StatusCode: 201, ETag: `"b"`, Item: []byte(`{"_etag":"\"b\"","id":"idem-k1"}`)},
					{StatusCode: 200, ETag: `"c"`},
				},
			},
		},
		{
			name: "duplicate idempotency key rolls back the order",
			resp: azcosmos.TransactionalBatchResponse{
				Response: azcosmos.Response{RequestCharge: 4},
				OperationResults: []azcosmos.TransactionalBatchResult{
					{StatusCode: 424}, {StatusCode: 409}, {StatusCode: 424},
				},
			},
			want: store.BatchResponse{
				RequestCharge: 4,
				Results: []store.BatchResult{
					{StatusCode: 424, Code: store.CodeFailedDependency},
					{StatusCode: 409, Code: domain.ECONFLICT},
					{StatusCode: 424, Code: store.CodeFailedDependency},
				},
			},
			wantCode:  domain.ECONFLICT,
			wantInMsg: "operation 1 (create)",
		},
		{
			name: "stale summary: the first real failure decides the code",
			resp: azcosmos.TransactionalBatchResponse{
				OperationResults: []azcosmos.TransactionalBatchResult{
					{StatusCode: 424}, {StatusCode: 424}, {StatusCode: 412},
				},
			},
			want: store.BatchResponse{
				Results: []store.BatchResult{
					{StatusCode: 424, Code: store.CodeFailedDependency},
					{StatusCode: 424, Code: store.CodeFailedDependency},
					{StatusCode: 412, Code: domain.EPRECONDITION},
				},
			},
			wantCode:  domain.EPRECONDITION,
			wantInMsg: "operation 2 (replace)",
		},
		{
			name: "not committed with no failing operation is a bug, not success",
			resp: azcosmos.TransactionalBatchResponse{
				OperationResults: []azcosmos.TransactionalBatchResult{{StatusCode: 424}},
			},
			want: store.BatchResponse{
				Results: []store.BatchResult{{StatusCode: 424, Code: store.CodeFailedDependency}},
			},
			wantCode: domain.EINTERNAL,
		},
	}
	c := &Container{name: "orders"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.batchResponse(ops, tc.resp)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if got, want := domain.ErrorCode(err), tc.wantCode; got != want {
				t.Fatalf("code = %q (%v), want %q", got, err, want)
			}
			if tc.wantInMsg != "" && !strings.Contains(domain.ErrorMessage(err), tc.wantInMsg) {
				t.Errorf("message %q does not name %q", domain.ErrorMessage(err), tc.wantInMsg)
			}
		})
	}
}

func TestBuildBatchRefuses(t *testing.T) {
	many := make([]store.BatchOp, store.MaxBatchOps+1)
	for i := range many {
		many[i] = store.BatchOp{Kind: store.BatchDelete, ID: "x"}
	}
	tests := []struct {
		name string
		ops  []store.BatchOp
	}{
		{"empty", nil},
		{"over 100 operations", many},
		{"unknown kind", []store.BatchOp{{Kind: "merge", ID: "a"}}},
		{"create without item", []store.BatchOp{{Kind: store.BatchCreate}}},
		{"create with If-Match", []store.BatchOp{{Kind: store.BatchCreate, Item: []byte(`{"id":"a"}`), IfMatch: `"1"`}}},
		{"replace of another id", []store.BatchOp{{Kind: store.BatchReplace, ID: "a", Item: []byte(`{"id":"b"}`)}}},
		{"replace without id", []store.BatchOp{{Kind: store.BatchReplace, Item: []byte(`{"id":"b"}`)}}},
		{"delete without id", []store.BatchOp{{Kind: store.BatchDelete}}},
		{"patch without operations", []store.BatchOp{{Kind: store.BatchPatch, ID: "a"}}},
		{"patch without id", []store.BatchOp{{Kind: store.BatchPatch, Patch: []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: 1}}}}},
		{"patch with a bad condition", []store.BatchOp{{Kind: store.BatchPatch, ID: "a",
			Patch:     []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: -1}},
			Condition: store.Condition{{Path: "n) OR (1", Op: store.OpGreaterOrEqual, Value: 1}}}}},
		{"condition on a replace", []store.BatchOp{{Kind: store.BatchReplace, ID: "a", Item: []byte(`{"id":"a"}`),
			Condition: store.Condition{{Path: "n", Op: store.OpGreaterOrEqual, Value: 1}}}}},
		{"patch operations on a delete", []store.BatchOp{{Kind: store.BatchDelete, ID: "a",
			Patch: []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: 1}}}}},
	}
	c := &Container{name: "orders"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.buildBatch("u1", tc.ops)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code = %q (%v), want %q", got, err, want)
			}
		})
	}
	big := []byte(`{"id":"a","blob":"` + strings.Repeat("x", store.MaxBatchBytes/2) + `"}`)
	_, err := c.buildBatch("u1", []store.BatchOp{{Kind: store.BatchUpsert, Item: big}, {Kind: store.BatchUpsert, Item: big}})
	if got, want := domain.ErrorCode(err), domain.ETOOLARGE; got != want {
		t.Errorf("a batch over 2 MB: code = %q (%v), want %q", got, err, want)
	}
	if _, err := c.buildBatch("u1", []store.BatchOp{
		{Kind: store.BatchCreate, Item: []byte(`{"id":"o1"}`)},
		{Kind: store.BatchUpsert, Item: []byte(`{"id":"k1"}`)},
		{Kind: store.BatchReplace, ID: "summary", Item: []byte(`{"id":"summary"}`), IfMatch: `"1"`},
		{Kind: store.BatchDelete, ID: "old", IfMatch: `"2"`},
		{Kind: store.BatchPatch, ID: "stock", Patch: []store.PatchOp{{Op: store.PatchIncrement, Path: "/available", Value: -2}},
			Condition: store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: 2}}},
	}); err != nil {
		t.Errorf("a valid batch was refused: %v", err)
	}
}

func TestPatchOperations(t *testing.T) {
	got, err := patchOperations([]store.PatchOp{
		{Op: store.PatchSet, Path: "/categoryName", Value: "Tea"},
		{Op: store.PatchReplace, Path: "/priceCents", Value: 450},
		{Op: store.PatchAdd, Path: "/tags/-", Value: "new"},
		{Op: store.PatchRemove, Path: "/previousCategoryId"},
		{Op: store.PatchIncrement, Path: "/priceVersion", Value: float64(1)},
		{Op: store.PatchIncrement, Path: "/version", Value: json.Number("2")},
		{Op: store.PatchSet, Path: "/note", Value: nil},
		{Op: store.PatchReplace, Path: "/tagline", Value: nil},
		{Op: store.PatchAdd, Path: "/extra", Value: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"operations":[` +
		`{"op":"set","path":"/categoryName","value":"Tea"},` +
		`{"op":"replace","path":"/priceCents","value":450},` +
		`{"op":"add","path":"/tags/-","value":"new"},` +
		`{"op":"remove","path":"/previousCategoryId"},` +
		`{"op":"incr","path":"/priceVersion","value":1},` +
		`{"op":"incr","path":"/version","value":2},` +
		// A nil value is JSON null, as on the embedded store: the SDK's
		// omitempty would otherwise drop "value" from the operation.
		`{"op":"set","path":"/note","value":null},` +
		`{"op":"replace","path":"/tagline","value":null},` +
		`{"op":"add","path":"/extra","value":null}]}`
	if got := string(b); got != want {
		t.Errorf("patch body\n got: %s\nwant: %s", got, want)
	}
}

func TestPatchOperationsRefuses(t *testing.T) {
	tests := []struct {
		name string
		ops  []store.PatchOp
	}{
		{"none", nil},
		{"unknown op", []store.PatchOp{{Op: "move", Path: "/a"}}},
		{"path not a pointer", []store.PatchOp{{Op: store.PatchSet, Path: "a", Value: 1}}},
		{"root path", []store.PatchOp{{Op: store.PatchSet, Path: "/", Value: 1}}},
		{"fractional increment", []store.PatchOp{{Op: store.PatchIncrement, Path: "/a", Value: 0.5}}},
		{"string increment", []store.PatchOp{{Op: store.PatchIncrement, Path: "/a", Value: "1"}}},
		{"over 10 operations", make11Sets()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := patchOperations(tc.ops)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code = %q (%v), want %q", got, err, want)
			}
		})
	}
}

// make11Sets is one patch operation more than Cosmos takes.
func make11Sets() []store.PatchOp {
	ops := make([]store.PatchOp, store.MaxPatchOps+1)
	for i := range ops {
		ops[i] = store.PatchOp{Op: store.PatchSet, Path: fmt.Sprintf("/f%d", i), Value: i}
	}
	return ops
}
