package webhooksig_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/webhooksig"
)

var (
	t0   = time.Unix(1796525644, 0)
	body = []byte(`{"id":"event-o-1-000000000002","eventType":"order.placed"}`)
)

func TestSignVerify(t *testing.T) {
	h := webhooksig.Sign([]string{"whsec_a"}, t0, body)
	if !strings.HasPrefix(h, "t=1796525644,v1=") || strings.Count(h, "v1=") != 1 {
		t.Fatalf("header %q", h)
	}
	if err := webhooksig.Verify(h, body, "whsec_a", time.Minute, t0.Add(30*time.Second)); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	for _, tc := range []struct {
		name   string
		header string
		body   []byte
		secret string
		now    time.Time
		want   error
	}{
		{"wrong secret", h, body, "whsec_b", t0, webhooksig.ErrNoMatch},
		{"tampered body", h, []byte(strings.Replace(string(body), "placed", "shipped", 1)), "whsec_a", t0, webhooksig.ErrNoMatch},
		{"old timestamp", h, body, "whsec_a", t0.Add(2 * time.Minute), webhooksig.ErrTooOld},
		{"future timestamp", h, body, "whsec_a", t0.Add(-2 * time.Minute), webhooksig.ErrTooOld},
		{"timestamp moved", strings.Replace(h, "t=1796525644", "t=1796525645", 1), body, "whsec_a", t0, webhooksig.ErrNoMatch},
		{"no timestamp", h[strings.Index(h, ",")+1:], body, "whsec_a", t0, webhooksig.ErrMalformed},
		{"no signature", "t=1796525644", body, "whsec_a", t0, webhooksig.ErrMalformed},
		{"garbage", "nonsense", body, "whsec_a", t0, webhooksig.ErrMalformed},
		{"empty", "", body, "whsec_a", t0, webhooksig.ErrMalformed},
	} {
		err := webhooksig.Verify(tc.header, tc.body, tc.secret, time.Minute, tc.now)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// During a rotation the request carries a v1 per valid secret: a
// receiver that knows either one accepts it.
func TestRotationBothVerify(t *testing.T) {
	h := webhooksig.Sign([]string{"whsec_new", "whsec_old"}, t0, body)
	if strings.Count(h, "v1=") != 2 {
		t.Fatalf("header %q", h)
	}
	for _, s := range []string{"whsec_new", "whsec_old"} {
		if err := webhooksig.Verify(h, body, s, 0, t0); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if err := webhooksig.Verify(h, body, "whsec_other", 0, t0); !errors.Is(err, webhooksig.ErrNoMatch) {
		t.Errorf("a third secret: %v", err)
	}
	// Unknown schemes beside v1 are ignored.
	if err := webhooksig.Verify(h+",v0=abc", body, "whsec_old", 0, t0); err != nil {
		t.Errorf("with a v0: %v", err)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add(webhooksig.Sign([]string{"k"}, t0, body), []byte("x"))
	f.Add("t=1,v1=00", []byte{})
	f.Fuzz(func(t *testing.T, header string, b []byte) {
		// Whatever the header, a signature that verifies b verifies no
		// other body.
		if webhooksig.Verify(header, b, "k", time.Minute, t0) == nil {
			if err := webhooksig.Verify(header, append(b, 'x'), "k", time.Minute, t0); !errors.Is(err, webhooksig.ErrNoMatch) {
				t.Fatalf("%q verifies %q and %q", header, b, append(b, 'x'))
			}
		}
	})
}
