package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/webhooksig"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/webhooks"
)

// subscriptionBody is a subscription as the API answers it; Secret is
// set only by a create and a rotation.
type subscriptionBody struct {
	ID                      string
	URL                     string
	EventTypes              []string
	Description             string
	Paused                  bool
	CreatedAt, UpdatedAt    time.Time
	PreviousSecretExpiresAt *time.Time
	Secret                  string
}

type deliveryBody struct {
	ID, SubscriptionID, EventID, EventType, Status string
	Attempts                                       int
	RedeliveredAt                                  *time.Time
}

// webhookClock is a fixed server clock (whole seconds, as a signature's
// timestamp), close enough to the real one for the tokens.
func webhookClock() (time.Time, func(*options)) {
	now := time.Now().UTC().Truncate(time.Second)
	return now, func(o *options) { o.now = func() time.Time { return now } }
}

func (s *shop) createWebhook(admin string, body any) subscriptionBody {
	s.t.Helper()
	r := s.do(req{method: "POST", path: "/v1/admin/webhooks", token: admin, body: body}).want(201)
	return decodeBody[subscriptionBody](s.t, r)
}

var receiver = map[string]any{"url": "https://receiver.example.com/hooks", "eventTypes": []string{"order.placed", "order.shipped"}, "description": "Fulfilment"}

func TestWebhookCreateGetList(t *testing.T) {
	now, clock := webhookClock()
	s := newShop(t, clock)
	admin := token(t, "boss", true)

	r := s.do(req{method: "POST", path: "/v1/admin/webhooks", token: admin, body: receiver}).want(201)
	created := decodeBody[subscriptionBody](t, r)
	if !strings.HasPrefix(created.ID, "wh-") || created.URL != "https://receiver.example.com/hooks" ||
		!slices.Equal(created.EventTypes, []string{"order.placed", "order.shipped"}) || created.Description != "Fulfilment" ||
		created.Paused || !created.CreatedAt.Equal(now) || created.PreviousSecretExpiresAt != nil {
		t.Errorf("created = %+v", created)
	}
	if created.Secret == "" {
		t.Fatal("the create's answer carries no secret")
	}
	if got, want := r.Header().Get("Location"), "/v1/admin/webhooks/"+created.ID; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if r.Header().Get("ETag") == "" {
		t.Error("no ETag")
	}
	// The list that counts the subscriptions, and the create.
	if got, want := r.ops(), "2"; got != want {
		t.Errorf("X-Store-Operations = %s, want %s", got, want)
	}
	stored, err := s.repos.Webhooks.Get(t.Context(), created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.ValidSecrets(now); !slices.Equal(got, []string{created.Secret}) {
		t.Errorf("stored secrets %v, want the one answered", got)
	}

	t.Run("GetHasETagAndNoSecret", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/admin/webhooks/" + created.ID, token: admin}).want(200)
		noSecret(t, r.Body.String(), created.Secret)
		if got := decodeBody[subscriptionBody](t, r); got.ID != created.ID || got.URL != created.URL {
			t.Errorf("got %+v", got)
		}
		if r.Header().Get("ETag") != stored.ETag {
			t.Errorf("ETag = %q, want %q", r.Header().Get("ETag"), stored.ETag)
		}
		if got, want := r.ops(), "1"; got != want {
			t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
	})
	t.Run("ListHasNoSecret", func(t *testing.T) {
		other := s.on(t).createWebhook(admin, map[string]any{"url": "https://crm.example.com/in", "eventTypes": []string{"product.deleted"}})
		r := s.do(req{method: "GET", path: "/v1/admin/webhooks", token: admin}).want(200)
		noSecret(t, r.Body.String(), created.Secret)
		noSecret(t, r.Body.String(), other.Secret)
		list := decodeBody[struct{ Items []subscriptionBody }](t, r)
		var ids []string
		for _, it := range list.Items {
			ids = append(ids, it.ID)
		}
		if len(ids) != 2 || !slices.Contains(ids, created.ID) || !slices.Contains(ids, other.ID) {
			t.Errorf("listed %v, want %s and %s", ids, created.ID, other.ID)
		}
	})
	t.Run("UnknownIs404", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "GET", path: "/v1/admin/webhooks/wh-none", token: admin}).want(404)
		s.do(req{method: "PATCH", path: "/v1/admin/webhooks/wh-none", token: admin, body: `{"paused":true}`,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}}).want(404)
		s.do(req{method: "POST", path: "/v1/admin/webhooks/wh-none/rotate-secret", token: admin}).want(404)
		s.do(req{method: "DELETE", path: "/v1/admin/webhooks/wh-none", token: admin}).want(404)
		s.do(req{method: "POST", path: "/v1/admin/webhooks/wh-none/deliveries/delivery-x/redeliver", token: admin}).want(404)
	})
}

// noSecret fails if body holds the secret or any "secret" key.
func noSecret(t *testing.T, body, secret string) {
	t.Helper()
	if strings.Contains(body, secret) || strings.Contains(body, `"secret"`) || strings.Contains(body, `"secrets"`) {
		t.Errorf("the answer shows a secret: %s", body)
	}
}

// TestWebhookValidation: every refusal of a subscription's fields is a
// 400 naming the field by its JSON pointer.
func TestWebhookValidation(t *testing.T) {
	s := newShop(t)
	admin := token(t, "boss", true)
	sub := s.createWebhook(admin, receiver)
	with := func(k string, v any) map[string]any {
		b := map[string]any{}
		for key, val := range receiver {
			b[key] = val
		}
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		body    any
		pointer string
	}{
		{"NoURL", with("url", nil), "/url"},
		{"HTTP", with("url", "http://receiver.example.com/hooks"), "/url"},
		{"NotAURL", with("url", "receiver"), "/url"},
		{"Loopback", with("url", "https://127.0.0.1/hooks"), "/url"},
		{"LoopbackV6", with("url", "https://[::1]/hooks"), "/url"},
		{"Private", with("url", "https://10.1.2.3/hooks"), "/url"},
		{"LinkLocalMetadata", with("url", "https://169.254.169.254/latest/meta-data"), "/url"},
		{"URLControlCharacter", with("url", "https://receiver.example.com/\u0007"), "/url"},
		{"NoEventTypes", with("eventTypes", nil), "/eventTypes"},
		{"EmptyEventTypes", with("eventTypes", []string{}), "/eventTypes"},
		{"UnknownEventType", with("eventTypes", []string{"order.placed", "order.lost"}), "/eventTypes/1"},
		{"DuplicateEventType", with("eventTypes", []string{"order.placed", "order.placed"}), "/eventTypes"},
		{"EventTypesNotAnArray", with("eventTypes", "order.placed"), "/eventTypes"},
		{"LongDescription", with("description", strings.Repeat("é", 501)), "/description"},
		{"DescriptionOverride", with("description", "evil\u202etxt"), "/description"},
		{"UnknownField", with("secret", "mine"), "/secret"},
		{"NullField", `{"url":null,"eventTypes":["order.placed"]}`, "/url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := s.on(t)
			p := decodeBody[problemBody](t, s.do(req{method: "POST", path: "/v1/admin/webhooks", token: admin, body: tc.body}).want(400))
			wantPointer(t, p, tc.pointer)
			if tc.name == "NoURL" || tc.name == "NoEventTypes" {
				return // a patch leaves an absent field as it is
			}
			// The patch refuses the same values with the same pointers.
			p = decodeBody[problemBody](t, s.do(req{method: "PATCH", path: "/v1/admin/webhooks/" + sub.ID, token: admin, body: patchOf(t, tc.body),
				header: map[string]string{"Content-Type": "application/merge-patch+json"}}).want(400))
			wantPointer(t, p, tc.pointer)
		})
	}
	t.Run("DescriptionOf500", func(t *testing.T) {
		s.on(t).createWebhook(admin, with("description", strings.Repeat("é", 500)))
	})
	t.Run("RotateOverlap", func(t *testing.T) {
		s := s.on(t)
		for _, body := range []string{`{"overlapSeconds":604801}`, `{"overlapSeconds":-1}`, `{"overlapSeconds":"1"}`, `{"overlap":1}`} {
			p := decodeBody[problemBody](t, s.do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/rotate-secret", token: admin, body: body}).want(400))
			if len(p.Errors) != 1 || !strings.HasPrefix(p.Errors[0].Pointer, "/overlap") {
				t.Errorf("%s: errors %+v, want one at /overlapSeconds", body, p.Errors)
			}
		}
	})
	t.Run("DeliveriesQuery", func(t *testing.T) {
		s := s.on(t)
		for _, q := range []string{"status=lost", "limit=0", "limit=101", "limit=x"} {
			s.do(req{method: "GET", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries?" + q, token: admin}).want(400)
		}
	})
	t.Run("BadIDs", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "GET", path: "/v1/admin/webhooks/-bad", token: admin}).want(400)
		s.do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries/-bad/redeliver", token: admin}).want(400)
	})
}

// patchOf is body as a patch: the same fields, as a string.
func patchOf(t *testing.T, body any) string {
	if s, ok := body.(string); ok {
		return s
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantPointer(t *testing.T, p problemBody, pointer string) {
	t.Helper()
	if p.Type != "https://shop.example/problems/invalid" {
		t.Errorf("type = %s", p.Type)
	}
	for _, e := range p.Errors {
		if e.Pointer == pointer && e.Detail != "" {
			return
		}
	}
	t.Errorf("errors = %+v, want one at %s; detail %q", p.Errors, pointer, p.Detail)
}

// TestWebhookInsecureAllowed: with AllowInsecure in Deps.Webhooks an
// http receiver is taken, and an address of the shop's own network still
// is not.
func TestWebhookInsecureAllowed(t *testing.T) {
	s := newShop(t, func(o *options) { o.webhooks.AllowInsecure = true })
	admin := token(t, "boss", true)
	s.createWebhook(admin, map[string]any{"url": "http://receiver.example.com/hooks", "eventTypes": []string{"order.placed"}})
	p := decodeBody[problemBody](t, s.do(req{method: "POST", path: "/v1/admin/webhooks", token: admin,
		body: map[string]any{"url": "http://192.168.1.5/hooks", "eventTypes": []string{"order.placed"}}}).want(400))
	wantPointer(t, p, "/url")
}

// TestWebhookPrivateAllowed: with AllowPrivate too (shop serve's dev
// mode on loopback, whose dispatcher calls such receivers) a receiver on
// this machine is taken, by create and by patch: the API refuses no URL
// its dispatcher would call.
func TestWebhookPrivateAllowed(t *testing.T) {
	s := newShop(t, func(o *options) { o.webhooks = webhooks.Policy{AllowPrivate: true, AllowInsecure: true} })
	admin := token(t, "boss", true)
	sub := s.createWebhook(admin, map[string]any{"url": "http://127.0.0.1:9090/webhooks", "eventTypes": []string{"order.placed"}})
	s.do(req{method: "PATCH", path: "/v1/admin/webhooks/" + sub.ID, token: admin, body: `{"url":"http://192.168.1.5/hooks"}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).want(200)
}

func TestWebhookPatch(t *testing.T) {
	now, clock := webhookClock()
	s := newShop(t, clock)
	admin := token(t, "boss", true)
	sub := s.createWebhook(admin, receiver)
	etag := s.do(req{method: "GET", path: "/v1/admin/webhooks/" + sub.ID, token: admin}).want(200).Header().Get("ETag")
	patch := func(s *shop, body, ifMatch string) response {
		h := map[string]string{"Content-Type": "application/merge-patch+json"}
		if ifMatch != "" {
			h["If-Match"] = ifMatch
		}
		return s.do(req{method: "PATCH", path: "/v1/admin/webhooks/" + sub.ID, token: admin, body: body, header: h})
	}

	r := patch(s, `{"paused":true,"eventTypes":["product.deleted"],"description":"Paused for a deploy"}`, etag).want(200)
	got := decodeBody[subscriptionBody](t, r)
	if !got.Paused || !slices.Equal(got.EventTypes, []string{"product.deleted"}) || got.Description != "Paused for a deploy" ||
		got.URL != sub.URL || !got.UpdatedAt.Equal(now) {
		t.Errorf("patched = %+v", got)
	}
	noSecret(t, r.Body.String(), sub.Secret)
	if got, want := r.ops(), "2"; got != want { // the read and the replace
		t.Errorf("X-Store-Operations = %s, want %s", got, want)
	}
	if r.Header().Get("ETag") == etag || r.Header().Get("ETag") == "" {
		t.Errorf("ETag %q after the patch, was %q", r.Header().Get("ETag"), etag)
	}
	t.Run("StaleIfMatchIs412", func(t *testing.T) {
		patch(s.on(t), `{"paused":false}`, etag).want(412)
	})
	t.Run("PlainJSONIs415", func(t *testing.T) {
		s.on(t).do(req{method: "PATCH", path: "/v1/admin/webhooks/" + sub.ID, token: admin, body: `{"paused":false}`}).want(415)
	})
	t.Run("Resume", func(t *testing.T) {
		got := decodeBody[subscriptionBody](t, patch(s.on(t), `{"paused":false,"url":"https://other.example.com/x"}`, "").want(200))
		if got.Paused || got.URL != "https://other.example.com/x" {
			t.Errorf("resumed = %+v", got)
		}
		stored, err := s.repos.Webhooks.Get(t.Context(), sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Paused || !slices.Equal(stored.ValidSecrets(now), []string{sub.Secret}) {
			t.Errorf("stored %+v: a patch must keep the secret", stored)
		}
	})
}

// TestWebhookRotate: a rotation answers a new secret once; the old one
// still signs until the answer's previousSecretExpiresAt, and no longer
// after it.
func TestWebhookRotate(t *testing.T) {
	now, clock := webhookClock()
	s := newShop(t, clock)
	admin := token(t, "boss", true)
	sub := s.createWebhook(admin, receiver)
	rotate := func(s *shop, body any) subscriptionBody {
		s.t.Helper()
		r := s.do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/rotate-secret", token: admin, body: body}).want(200)
		if got, want := r.ops(), "2"; got != want { // the read and the replace
			s.t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
		return decodeBody[subscriptionBody](s.t, r)
	}

	t.Run("DefaultOverlapIsADay", func(t *testing.T) {
		got := rotate(s.on(t), nil)
		if got.Secret == "" || got.Secret == sub.Secret {
			t.Fatalf("rotated secret %q, want a new one", got.Secret)
		}
		if want := now.Add(api.DefaultSecretOverlap); got.PreviousSecretExpiresAt == nil || !got.PreviousSecretExpiresAt.Equal(want) {
			t.Fatalf("previousSecretExpiresAt = %v, want %v", got.PreviousSecretExpiresAt, want)
		}
		stored, err := s.repos.Webhooks.Get(t.Context(), sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"id":"event-o-1-000000000003"}`)
		verifies := func(secret string, at time.Time) bool {
			header := webhooksig.Sign(stored.ValidSecrets(at), at, body)
			return webhooksig.Verify(header, body, secret, time.Minute, at) == nil
		}
		before, after := got.PreviousSecretExpiresAt.Add(-time.Second), got.PreviousSecretExpiresAt.Add(time.Second)
		if !verifies(sub.Secret, before) || !verifies(got.Secret, before) {
			t.Error("before the expiry, a delivery does not verify with both secrets")
		}
		if verifies(sub.Secret, after) || !verifies(got.Secret, after) {
			t.Error("after the expiry, a delivery verifies with the old secret, or not with the new one")
		}
		r := s.do(req{method: "GET", path: "/v1/admin/webhooks/" + sub.ID, token: admin}).want(200)
		noSecret(t, r.Body.String(), got.Secret)
		sub.Secret = got.Secret
	})
	t.Run("Overlap", func(t *testing.T) {
		got := rotate(s.on(t), map[string]int{"overlapSeconds": 3600})
		if want := now.Add(time.Hour); got.PreviousSecretExpiresAt == nil || !got.PreviousSecretExpiresAt.Equal(want) {
			t.Errorf("previousSecretExpiresAt = %v, want %v", got.PreviousSecretExpiresAt, want)
		}
		sub.Secret = got.Secret
	})
	t.Run("NoOverlap", func(t *testing.T) {
		got := rotate(s.on(t), map[string]int{"overlapSeconds": 0})
		if got.PreviousSecretExpiresAt != nil {
			t.Errorf("previousSecretExpiresAt = %v, want none: the old secret stopped at once", got.PreviousSecretExpiresAt)
		}
		stored, err := s.repos.Webhooks.Get(t.Context(), sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if valid := stored.ValidSecrets(now); len(valid) != 1 || valid[0] != got.Secret {
			t.Errorf("valid secrets %v, want the new one only", valid)
		}
	})
}

// addDelivery stores a delivery of subscription sub in status, as the
// relay (and, for a dead one, the dispatcher) would.
func (s *shop) addDelivery(sub, eventID, status string, at time.Time) string {
	s.t.Helper()
	d := domain.Delivery{SubscriptionID: sub, EventID: eventID, EventType: domain.EventOrderPlaced, Subject: "o-1",
		Sequence: 3, Status: status, Attempts: 8, NextAttemptAt: at, CreatedAt: at, LastStatus: 500, LastError: "receiver answered 500",
		Body: json.RawMessage(`{"id":"` + eventID + `"}`)}
	if err := s.repos.Webhooks.CreateDelivery(context.Background(), d); err != nil {
		s.t.Fatalf("delivery: %v", err)
	}
	return domain.DeliveryID(eventID)
}

func TestWebhookDeliveries(t *testing.T) {
	now, clock := webhookClock()
	s := newShop(t, clock)
	admin := token(t, "boss", true)
	sub := s.createWebhook(admin, receiver)
	dead := s.addDelivery(sub.ID, "event-o-1-000000000003", domain.DeliveryDead, now.Add(-time.Hour))
	pending := s.addDelivery(sub.ID, "event-o-1-000000000004", domain.DeliveryPending, now.Add(-time.Hour))
	s.addDelivery(sub.ID, "event-o-2-000000000003", domain.DeliveryDelivered, now.Add(-time.Hour))
	list := func(s *shop, query string) (page struct {
		Items        []deliveryBody
		Continuation *string
	}, r response) {
		s.t.Helper()
		r = s.do(req{method: "GET", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries" + query, token: admin}).want(200)
		return decodeBody[struct {
			Items        []deliveryBody
			Continuation *string
		}](s.t, r), r
	}

	t.Run("All", func(t *testing.T) {
		page, r := list(s.on(t), "")
		if len(page.Items) != 3 || page.Continuation != nil {
			t.Errorf("all = %+v", page)
		}
		if got, want := r.ops(), "1"; got != want {
			t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
	})
	t.Run("DeadLetters", func(t *testing.T) {
		page, _ := list(s.on(t), "?status=dead")
		if len(page.Items) != 1 || page.Items[0].ID != dead || page.Items[0].Status != "dead" || page.Items[0].EventType != "order.placed" {
			t.Errorf("dead = %+v", page.Items)
		}
	})
	t.Run("Paged", func(t *testing.T) {
		first, _ := list(s.on(t), "?limit=2")
		if len(first.Items) != 2 || first.Continuation == nil {
			t.Fatalf("first page = %+v, want 2 and a continuation", first)
		}
		second, _ := list(s.on(t), "?limit=2&continuation="+*first.Continuation)
		if len(second.Items) != 1 || second.Items[0].ID == first.Items[0].ID || second.Items[0].ID == first.Items[1].ID {
			t.Errorf("second page = %+v", second)
		}
	})
	t.Run("UnknownSubscriptionHasNone", func(t *testing.T) {
		r := s.on(t).do(req{method: "GET", path: "/v1/admin/webhooks/wh-none/deliveries", token: admin}).want(200)
		if got := decodeBody[struct{ Items []deliveryBody }](t, r); len(got.Items) != 0 {
			t.Errorf("items = %+v", got.Items)
		}
	})
	t.Run("RedeliverDead", func(t *testing.T) {
		s := s.on(t)
		r := s.do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries/" + dead + "/redeliver", token: admin}).want(200)
		if got, want := r.ops(), "2"; got != want { // the read and the replace
			t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
		got := decodeBody[deliveryBody](t, r)
		if got.ID != dead || got.Status != "pending" || got.Attempts != 0 || got.RedeliveredAt == nil || !got.RedeliveredAt.Equal(now) {
			t.Errorf("redelivered = %+v", got)
		}
		stored, err := s.repos.Webhooks.GetDelivery(t.Context(), sub.ID, dead)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Status != domain.DeliveryPending || !stored.NextAttemptAt.Equal(now) {
			t.Errorf("stored = %s due %v, want pending, due now", stored.Status, stored.NextAttemptAt)
		}
		if page, _ := list(s, "?status=dead"); len(page.Items) != 0 {
			t.Errorf("dead letters after the redelivery = %+v", page.Items)
		}
		// Pending now: a second redelivery is refused.
		s.do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries/" + dead + "/redeliver", token: admin}).want(409)
	})
	t.Run("RedeliverPendingIs409", func(t *testing.T) {
		p := decodeBody[problemBody](t, s.on(t).do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries/" + pending + "/redeliver", token: admin}).want(409))
		if p.Type != "https://shop.example/problems/conflict" {
			t.Errorf("type = %s", p.Type)
		}
	})
	t.Run("RedeliverUnknownIs404", func(t *testing.T) {
		s.on(t).do(req{method: "POST", path: "/v1/admin/webhooks/" + sub.ID + "/deliveries/delivery-none/redeliver", token: admin}).want(404)
	})
	t.Run("DeleteTakesTheDeliveries", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "DELETE", path: "/v1/admin/webhooks/" + sub.ID, token: admin}).want(204)
		s.do(req{method: "GET", path: "/v1/admin/webhooks/" + sub.ID, token: admin}).want(404)
		if page, _ := list(s, ""); len(page.Items) != 0 {
			t.Errorf("deliveries after the delete = %+v", page.Items)
		}
		s.do(req{method: "DELETE", path: "/v1/admin/webhooks/" + sub.ID, token: admin}).want(404)
	})
}

// TestWebhookBound: past api.MaxSubscriptions a create is a 409; deleting
// one makes room.
func TestWebhookBound(t *testing.T) {
	s := newShop(t)
	admin := token(t, "boss", true)
	var last domain.Subscription
	for i := range api.MaxSubscriptions {
		var err error
		last, _, err = s.repos.Webhooks.Create(t.Context(), domain.Subscription{URL: "https://r" + strconv.Itoa(i) + ".example.com/",
			EventTypes: []string{domain.EventOrderPlaced}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
	}
	p := decodeBody[problemBody](t, s.do(req{method: "POST", path: "/v1/admin/webhooks", token: admin, body: receiver}).want(409))
	if p.Type != "https://shop.example/problems/conflict" || !strings.Contains(p.Detail, strconv.Itoa(api.MaxSubscriptions)) {
		t.Errorf("problem = %+v", p)
	}
	s.do(req{method: "DELETE", path: "/v1/admin/webhooks/" + last.ID, token: admin}).want(204)
	s.createWebhook(admin, receiver)
}

// TestWebhookRoutesNeedAdmin: every webhook route is a 401 without a
// token and a 403 for a customer, before anything is read.
func TestWebhookRoutesNeedAdmin(t *testing.T) {
	s := newShop(t)
	alice := token(t, "alice", false)
	for _, r := range []req{
		{method: "POST", path: "/v1/admin/webhooks", body: receiver},
		{method: "GET", path: "/v1/admin/webhooks"},
		{method: "GET", path: "/v1/admin/webhooks/wh-1"},
		{method: "PATCH", path: "/v1/admin/webhooks/wh-1", body: `{"paused":true}`, header: map[string]string{"Content-Type": "application/merge-patch+json"}},
		{method: "DELETE", path: "/v1/admin/webhooks/wh-1"},
		{method: "POST", path: "/v1/admin/webhooks/wh-1/rotate-secret"},
		{method: "GET", path: "/v1/admin/webhooks/wh-1/deliveries"},
		{method: "POST", path: "/v1/admin/webhooks/wh-1/deliveries/delivery-1/redeliver"},
	} {
		t.Run(r.method+r.path, func(t *testing.T) {
			s := s.on(t)
			if w := s.do(r).want(401); w.ops() != "0" {
				t.Errorf("anonymous: X-Store-Operations = %s, want 0", w.ops())
			}
			r.token = alice
			if w := s.do(r).want(403); w.ops() != "0" {
				t.Errorf("customer: X-Store-Operations = %s, want 0", w.ops())
			}
		})
	}
}
