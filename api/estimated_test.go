package api_test

import "testing"

// TestChargeEstimatedHeader: a store whose Request Units are an estimate
// says so on every /v1 response, errors included; a store reporting real
// charges (Cosmos) sends no such header, so a client labels neither wrong.
func TestChargeEstimatedHeader(t *testing.T) {
	for _, tt := range []struct {
		name      string
		estimated bool
		want      string
	}{
		{"EmbeddedEstimates", true, "true"},
		{"RealCharges", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newShop(t, func(o *options) { o.estimated = tt.estimated })
			s.fixture()
			for _, path := range []string{"/v1/categories", "/v1/products/book-1", "/v1/products/nope"} {
				r := s.do(req{method: "GET", path: path})
				if got := r.Header().Get("X-Request-Charge-Estimated"); got != tt.want {
					t.Errorf("GET %s: X-Request-Charge-Estimated = %q, want %q", path, got, tt.want)
				}
			}
		})
	}
}
