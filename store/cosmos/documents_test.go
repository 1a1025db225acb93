package cosmos

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

func TestFromCosmos(t *testing.T) {
	tests := []struct {
		name string
		body string
		etag string
		want map[string]any // nil: no item
	}{
		{
			name: "system properties Cosmos keeps to itself are dropped",
			body: `{"id":"p1","name":"Tea","_rid":"AbC=","_self":"dbs/x/colls/y/docs/z/","_attachments":"attachments/","_etag":"\"0a00\"","_ts":1764400000}`,
			etag: `"0a00"`,
			want: map[string]any{"id": "p1", "name": "Tea", "_etag": `"0a00"`, "_ts": float64(1764400000)},
		},
		{
			name: "change feed's _lsn is dropped",
			body: `{"id":"c1","_lsn":42,"_etag":"\"1\""}`,
			want: map[string]any{"id": "c1", "_etag": `"1"`},
		},
		{
			name: "the response ETag fills a missing _etag",
			body: `{"id":"p1"}`,
			etag: `"0b00"`,
			want: map[string]any{"id": "p1", "_etag": `"0b00"`},
		},
		{
			name: "a projection without _etag and no header stays as it is",
			body: `{"id":"p1","name":"Tea"}`,
			want: map[string]any{"id": "p1", "name": "Tea"},
		},
		{
			name: "no body (a delete, or a write without content) is no item",
			body: "",
			etag: `"0c00"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fromCosmos([]byte(tc.body), azETag(tc.etag))
			if err != nil {
				t.Fatalf("fromCosmos: %v", err)
			}
			if tc.want == nil {
				if got != nil {
					t.Errorf("item = %s, want none", got)
				}
				return
			}
			var doc map[string]any
			if err := json.Unmarshal(got, &doc); err != nil {
				t.Fatalf("result is not JSON: %v", err)
			}
			if diff := cmp.Diff(tc.want, doc); diff != "" {
				t.Errorf("item (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromCosmosRefusesNonObjects(t *testing.T) {
	for _, body := range []string{`[1,2]`, `"text"`, `{"id":`} {
		_, err := fromCosmos([]byte(body), "")
		if got, want := domain.ErrorCode(err), domain.EINTERNAL; got != want {
			t.Errorf("fromCosmos(%s) code = %q, want %q", body, got, want)
		}
	}
}

func TestEtagOf(t *testing.T) {
	if got, want := etagOf([]byte(`{"id":"a","_etag":"\"9\""}`)), `"9"`; got != want {
		t.Errorf("etagOf = %q, want %q", got, want)
	}
	if got, want := etagOf([]byte(`not json`)), ""; got != want {
		t.Errorf("etagOf(garbage) = %q, want %q", got, want)
	}
}

func TestCheckItem(t *testing.T) {
	big := `{"id":"big","pad":"` + strings.Repeat("x", store.MaxItemBytes) + `"}`
	tests := []struct {
		name   string
		item   string
		wantID string
		code   string
	}{
		{"valid", `{"id":"p1","type":"product"}`, "p1", ""},
		{"over 2 MB", big, "", domain.ETOOLARGE},
		{"not an object", `[{"id":"p1"}]`, "", domain.EINVALID},
		{"null", `null`, "", domain.EINVALID},
		{"no id", `{"name":"x"}`, "", domain.EINVALID},
		{"numeric id", `{"id":7}`, "", domain.EINVALID},
		{"empty id", `{"id":""}`, "", domain.EINVALID},
		{"slash in id", `{"id":"a/b"}`, "a/b", domain.EINVALID},
		{"hash in id", `{"id":"a#b"}`, "a#b", domain.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := checkItem([]byte(tc.item))
			if got := domain.ErrorCode(err); got != tc.code {
				t.Errorf("code = %q (%v), want %q", got, err, tc.code)
			}
			if got := id; got != tc.wantID {
				t.Errorf("id = %q, want %q", got, tc.wantID)
			}
		})
	}
}

func TestCheckIDAndPartitionKey(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code string
	}{
		{"plain id", checkID("review-u1"), ""},
		{"id at the limit", checkID(strings.Repeat("a", store.MaxIDBytes)), ""},
		{"id over the limit", checkID(strings.Repeat("a", store.MaxIDBytes+1)), domain.EINVALID},
		{"backslash", checkID(`a\b`), domain.EINVALID},
		{"question mark", checkID("a?b"), domain.EINVALID},
		{"plain pk", checkPK("placed:2026-11-29"), ""},
		{"empty pk", checkPK(""), domain.EINVALID},
		{"pk over the limit", checkPK(strings.Repeat("k", store.MaxPartitionKey+1)), domain.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := domain.ErrorCode(tc.err); got != tc.code {
				t.Errorf("code = %q (%v), want %q", got, tc.err, tc.code)
			}
		})
	}
}

func azETag(s string) azcore.ETag { return azcore.ETag(s) }
