package domain_test

import (
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
)

// TestSetStatusRefusalReadsAsWords: a refused transition says where the
// order stands and where it can go, never "is cancelled and cannot become
// cancelled".
func TestSetStatusRefusalReadsAsWords(t *testing.T) {
	tests := []struct {
		from, to, want string
	}{
		{domain.StatusCancelled, domain.StatusCancelled, "order o-1 is already cancelled"},
		{domain.StatusDelivered, domain.StatusCancelled, "order o-1 is delivered, which is final: it can no longer be cancelled"},
		{domain.StatusPlaced, domain.StatusDelivered, "order o-1 is placed, so it can be shipped or cancelled next, not delivered"},
	}
	for _, tt := range tests {
		t.Run(tt.from+"To"+tt.to, func(t *testing.T) {
			o := domain.Order{Meta: domain.Meta{ID: "o-1"}, Status: tt.from}
			err := o.SetStatus(tt.to, time.Now())
			if got := domain.ErrorMessage(err); got != tt.want {
				t.Errorf("SetStatus(%s → %s) = %q, want %q", tt.from, tt.to, got, tt.want)
			}
			if !domain.IsCode(err, domain.ECONFLICT) {
				t.Errorf("code of %v, want ECONFLICT", err)
			}
		})
	}
}
