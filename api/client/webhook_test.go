package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/api/webhooksig"
	"github.com/reference-shop/shop/domain"
)

// The client verifies what the shop's signer signs, and decodes the
// event the shop writes.
func TestWebhookHandler(t *testing.T) {
	o := domain.Order{Meta: domain.Meta{ID: "o-1"}, UserID: "u-1", Status: domain.StatusPlaced, History: make([]domain.Step, 3),
		Items: []domain.OrderLine{{ProductID: "p-1", Name: "Mug", UnitPriceCents: 900, Quantity: 2, LineTotalCents: 1800}}}
	ev, ok := domain.NewOrderEvent(o, domain.StatusAuthorized)
	if !ok {
		t.Fatal("no event")
	}
	ev.TTL = nil
	body, _ := json.Marshal(ev)

	var got []client.WebhookEvent
	srv := httptest.NewServer(client.WebhookHandler("whsec_k", time.Minute, func(e client.WebhookEvent) error {
		if e.Subject == "fail" {
			return errors.New("no")
		}
		got = append(got, e)
		return nil
	}))
	defer srv.Close()
	post := func(body []byte, sig string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set(client.WebhookSignatureHeader, sig)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	now := time.Now()
	if code := post(body, webhooksig.Sign([]string{"whsec_new", "whsec_k"}, now, body)); code != http.StatusNoContent {
		t.Fatalf("signed: %d", code)
	}
	if len(got) != 1 || got[0].ID != ev.ID || got[0].Order == nil || got[0].Order.Items[0].Quantity != 2 || got[0].Order.PreviousStatus != domain.StatusAuthorized || got[0].Sequence != 3 {
		t.Fatalf("decoded %+v", got)
	}
	for name, tc := range map[string]struct {
		body []byte
		sig  string
		want int
	}{
		"wrong secret":  {body, webhooksig.Sign([]string{"whsec_other"}, now, body), 400},
		"tampered body": {bytes.Replace(body, []byte("o-1"), []byte("o-2"), 1), webhooksig.Sign([]string{"whsec_k"}, now, body), 400},
		"old":           {body, webhooksig.Sign([]string{"whsec_k"}, now.Add(-time.Hour), body), 400},
		"no signature":  {body, "", 400},
		"too large":     {[]byte(strings.Repeat("x", client.MaxWebhookBody+1)), "t=1,v1=00", 413},
		"handler fails": {[]byte(`{"subject":"fail"}`), webhooksig.Sign([]string{"whsec_k"}, now, []byte(`{"subject":"fail"}`)), 500},
	} {
		if code := post(tc.body, tc.sig); code != tc.want {
			t.Errorf("%s: %d, want %d", name, code, tc.want)
		}
	}
	if len(got) != 1 {
		t.Errorf("handled %d events", len(got))
	}
}
