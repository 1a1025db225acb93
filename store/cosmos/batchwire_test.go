package cosmos

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// A transactional batch that failed is a 207 whose body has one result
// per operation: its statusCode, and for some the subStatusCode and the
// retryAfterMilliseconds that a point operation carries in headers. The
// domain error of the batch keeps what they say.
func TestWireBatchMultiStatus(t *testing.T) {
	tests := []struct {
		name      string
		header    http.Header // of the 207
		results   []map[string]any
		wantCode  string
		wantRetry time.Duration
	}{
		{
			name: "throttled operation with its own wait",
			results: []map[string]any{
				{"statusCode": 424, "requestCharge": 0},
				{"statusCode": 429, "subStatusCode": 3200, "retryAfterMilliseconds": 1500, "requestCharge": 1},
			},
			wantCode:  domain.EUNAVAILABLE,
			wantRetry: 1500 * time.Millisecond,
		},
		{
			name:   "throttled operation, the wait in the response's header",
			header: http.Header{"X-Ms-Retry-After-Ms": {"700"}},
			results: []map[string]any{
				{"statusCode": 429, "subStatusCode": 3200, "requestCharge": 1},
				{"statusCode": 424, "requestCharge": 0},
			},
			wantCode:  domain.EUNAVAILABLE,
			wantRetry: 700 * time.Millisecond,
		},
		{
			name: "operation on a full logical partition",
			results: []map[string]any{
				{"statusCode": 403, "subStatusCode": 1014, "requestCharge": 1},
				{"statusCode": 424, "requestCharge": 0},
			},
			wantCode: domain.EPARTITIONFULL,
		},
		{
			name: "operation refused access",
			results: []map[string]any{
				{"statusCode": 403, "subStatusCode": 5301, "requestCharge": 1},
				{"statusCode": 424, "requestCharge": 0},
			},
			wantCode: domain.EINTERNAL,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t)
			// Batches are answered here; the rest by the gateway.
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("x-ms-cosmos-is-batch-request") == "" {
					g.serve(w, r)
					return
				}
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.Header().Set(headerContentPath, g.rid)
				w.Header().Set("x-ms-request-charge", "1")
				writeJSON(w, http.StatusMultiStatus, tc.results)
			}))
			t.Cleanup(srv.Close)
			key := base64.StdEncoding.EncodeToString([]byte("wire-test-key"))
			s, err := Open(context.Background(), Config{Endpoint: srv.URL, Key: key, Database: "shop", Emulator: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			resp, err := s.Container("carts").ExecuteBatch(t.Context(), "u1", []store.BatchOp{
				{Kind: store.BatchCreate, Item: []byte(`{"id":"a"}`)},
				{Kind: store.BatchCreate, Item: []byte(`{"id":"b"}`)},
			})
			if resp.Committed {
				t.Errorf("a 207 committed the batch")
			}
			e, ok := errors.AsType[*domain.Error](err)
			if !ok || e.Code != tc.wantCode {
				t.Fatalf("error = %v, want %s", err, tc.wantCode)
			}
			if e.RetryAfter != tc.wantRetry {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tc.wantRetry)
			}
			for i, res := range resp.Results {
				if want := tc.results[i]["statusCode"]; res.StatusCode != want {
					t.Errorf("operation %d: status %d, want %v", i, res.StatusCode, want)
				}
			}
		})
	}
}
