package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/api/webhooksig"
)

func TestReceiverPrintsVerifiedEvents(t *testing.T) {
	var out, errs bytes.Buffer
	srv := httptest.NewServer(handler("/webhooks", "whsec_k", time.Minute, &out, &errs))
	defer srv.Close()
	body := []byte(`{"id":"event-o-1-000000000002","eventType":"order.placed","subject":"o-1","sequence":2}`)
	for _, sig := range []string{webhooksig.Sign([]string{"whsec_k"}, time.Now(), body), webhooksig.Sign([]string{"whsec_x"}, time.Now(), body)} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks", bytes.NewReader(body))
		req.Header.Set(client.WebhookSignatureHeader, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var e client.WebhookEvent
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &e) != nil || e.Subject != "o-1" || e.Sequence != 2 {
		t.Fatalf("stdout %q", out.String())
	}
	if !strings.Contains(errs.String(), "refused") {
		t.Errorf("stderr %q", errs.String())
	}
	if err := run(nil, func(string) string { return "" }, &out, &errs); err == nil || !strings.Contains(err.Error(), "secret") {
		t.Errorf("run without a secret: %v", err)
	}
}
