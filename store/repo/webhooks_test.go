package repo_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

func newSubscription(t *testing.T, r *repo.Webhooks) (domain.Subscription, string) {
	t.Helper()
	sub, secret, err := r.Create(t.Context(), domain.Subscription{
		URL: "https://example.com/hook", EventTypes: []string{domain.EventOrderPlaced},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	return sub, secret
}

func TestWebhookSubscriptionLifecycle(t *testing.T) {
	r := repo.NewWebhooks(newStore(t))
	ctx := t.Context()
	sub, secret := newSubscription(t, r)
	if !strings.HasPrefix(sub.ID, "wh-") || sub.SubscriptionID != sub.ID || !strings.HasPrefix(secret, "whsec_") || len(secret) != len("whsec_")+43 {
		t.Fatalf("created %+v with secret %q", sub, secret)
	}
	got, err := r.Get(ctx, sub.ID)
	if err != nil || got.URL != sub.URL || len(got.Secrets) != 1 || got.Secrets[0].Secret != secret {
		t.Fatalf("get: %+v, %v", got, err)
	}
	_, _, err = r.Create(ctx, domain.Subscription{URL: "https://x", EventTypes: []string{"order.nope"}}, now)
	wantCode(t, "create with an unknown event type", err, domain.EINVALID)

	// Update keeps the secrets and the id whatever the change does.
	upd, err := r.Update(ctx, sub.ID, got.ETag, func(s *domain.Subscription) error {
		s.Paused, s.ID, s.Secrets = true, "other", nil
		return nil
	}, now.Add(time.Minute))
	if err != nil || !upd.Paused || upd.ID != sub.ID || len(upd.Secrets) != 1 || !upd.UpdatedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("update: %+v, %v", upd, err)
	}
	_, err = r.Update(ctx, sub.ID, got.ETag, func(s *domain.Subscription) error { return nil }, now)
	wantCode(t, "update with a stale If-Match", err, domain.EPRECONDITION)
	_, err = r.Update(ctx, "wh-none", "", func(s *domain.Subscription) error { return nil }, now)
	wantCode(t, "update of a missing subscription", err, domain.ENOTFOUND)

	// Rotation: the new secret first, the old one valid for the overlap.
	rot, second, err := r.RotateSecret(ctx, sub.ID, time.Hour, now)
	if err != nil || second == secret || len(rot.Secrets) != 2 || rot.Secrets[0].Secret != second {
		t.Fatalf("rotate: %+v, %v", rot, err)
	}
	if v := rot.ValidSecrets(now.Add(time.Minute)); len(v) != 2 || v[0] != second || v[1] != secret {
		t.Fatalf("valid during the overlap: %v", v)
	}
	if v := rot.ValidSecrets(now.Add(time.Hour)); len(v) != 1 || v[0] != second {
		t.Fatalf("valid after the overlap: %v", v)
	}
	// A second rotation with a longer overlap does not extend the first
	// secret; a third after it expired drops it.
	rot, third, err := r.RotateSecret(ctx, sub.ID, 5*time.Hour, now.Add(time.Minute))
	if err != nil || len(rot.Secrets) != 3 || !rot.Secrets[2].ExpiresAt.Equal(now.Add(time.Hour)) || !rot.Secrets[1].ExpiresAt.Equal(now.Add(time.Minute+5*time.Hour)) {
		t.Fatalf("second rotation: %+v, %v", rot, err)
	}
	rot, _, err = r.RotateSecret(ctx, sub.ID, time.Hour, now.Add(2*time.Hour))
	if err != nil || len(rot.Secrets) != 3 || rot.Secrets[1].Secret != third || rot.Secrets[2].Secret != second {
		t.Fatalf("third rotation: %+v, %v", rot, err)
	}

	list, err := r.List(ctx, 10)
	if err != nil || len(list) != 1 || list[0].ID != sub.ID {
		t.Fatalf("list: %+v, %v", list, err)
	}

	// Delete takes the deliveries with it.
	if err := r.CreateDelivery(ctx, delivery(sub.ID, "o-1", 1, now)); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	_, err = r.Get(ctx, sub.ID)
	wantCode(t, "get after delete", err, domain.ENOTFOUND)
	page, err := r.ListDeliveries(ctx, sub.ID, "", 10, "")
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("deliveries after delete: %d, %v", len(page.Items), err)
	}
	wantCode(t, "delete twice", r.Delete(ctx, sub.ID), domain.ENOTFOUND)
}

func delivery(subID, subject string, seq int64, at time.Time) domain.Delivery {
	eventID := domain.EventID(subject, seq)
	return domain.Delivery{
		SubscriptionID: subID, EventID: eventID, EventType: domain.EventOrderPlaced,
		Subject: subject, Sequence: seq, Status: domain.DeliveryPending,
		NextAttemptAt: at, CreatedAt: at, Body: json.RawMessage(fmt.Sprintf(`{"id":%q}`, eventID)),
	}
}

func TestWebhookDeliveries(t *testing.T) {
	r := repo.NewWebhooks(newStore(t))
	ctx := t.Context()
	sub, _ := newSubscription(t, r)
	for _, d := range []domain.Delivery{
		delivery(sub.ID, "o-1", 3, now),
		delivery(sub.ID, "o-1", 1, now.Add(time.Minute)), // not due: blocks o-1
		delivery(sub.ID, "o-2", 2, now),
		delivery(sub.ID, "o-2", 5, now),
	} {
		if err := r.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, "create twice", r.CreateDelivery(ctx, delivery(sub.ID, "o-2", 5, now)), domain.ECONFLICT)

	due, err := r.Due(ctx, sub.ID, now, 10)
	if err != nil || len(due) != 1 || due[0].Subject != "o-2" || due[0].Sequence != 2 {
		t.Fatalf("due: %+v, %v", due, err)
	}
	pend, err := r.Pending(ctx, sub.ID, "o-1")
	if err != nil || len(pend) != 2 || pend[0].Sequence != 1 {
		t.Fatalf("pending o-1: %+v, %v", pend, err)
	}

	// Claim, then a second claim of the same version loses.
	d := due[0]
	claimed, err := r.Claim(ctx, d, "a", now, now.Add(time.Minute))
	if err != nil || claimed.ClaimedBy != "a" {
		t.Fatalf("claim: %+v, %v", claimed, err)
	}
	_, err = r.Claim(ctx, d, "b", now, now.Add(time.Minute))
	wantCode(t, "second claim", err, domain.EPRECONDITION)
	// A claim read as another's, still holding, is refused even with the
	// current _etag.
	_, err = r.Claim(ctx, claimed, "b", now, now.Add(time.Minute))
	wantCode(t, "a claim over another's", err, domain.EPRECONDITION)
	if due, _ := r.Due(ctx, sub.ID, now, 10); len(due) != 0 {
		t.Fatalf("due while claimed: %+v", due)
	}
	failed, err := r.Fail(ctx, claimed, 500, "500 Internal Server Error", now.Add(time.Second))
	if err != nil || failed.Attempts != 1 || failed.LastStatus != 500 || failed.ClaimedBy != "" {
		t.Fatalf("fail: %+v, %v", failed, err)
	}
	_, err = r.Complete(ctx, claimed, 200, now)
	wantCode(t, "complete of a stale claim", err, domain.EPRECONDITION)

	due, _ = r.Due(ctx, sub.ID, now.Add(time.Second), 10)
	if len(due) != 1 || due[0].Sequence != 2 {
		t.Fatalf("due again: %+v", due)
	}
	claimed, _ = r.Claim(ctx, due[0], "a", now, now.Add(time.Minute))
	done, err := r.Complete(ctx, claimed, 204, now.Add(time.Second))
	if err != nil || done.Status != domain.DeliveryDelivered || done.Attempts != 2 || done.TTL == nil || *done.TTL != 3*24*3600 {
		t.Fatalf("complete: %+v, %v", done, err)
	}
	_, err = r.Redeliver(ctx, sub.ID, done.ID, now)
	wantCode(t, "redeliver of a delivered one", err, domain.ECONFLICT)

	// o-2's next is due now; o-1's head (seq 1) falls due in a minute.
	due, _ = r.Due(ctx, sub.ID, now.Add(2*time.Minute), 10)
	if len(due) != 2 || due[0].Subject != "o-2" || due[0].Sequence != 5 || due[1].Subject != "o-1" || due[1].Sequence != 1 {
		t.Fatalf("due later: %+v", due)
	}
	claimed, _ = r.Claim(ctx, due[1], "a", now, now.Add(3*time.Minute))
	dead, err := r.MarkDead(ctx, claimed, 0, "connection refused", now.Add(2*time.Minute))
	if err != nil || dead.Status != domain.DeliveryDead || *dead.TTL != 14*24*3600 {
		t.Fatalf("dead: %+v, %v", dead, err)
	}
	page, err := r.ListDeliveries(ctx, sub.ID, domain.DeliveryDead, 10, "")
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("dead list: %d, %v", len(page.Items), err)
	}
	// The dead one no longer blocks o-1's seq 3.
	due, _ = r.Due(ctx, sub.ID, now.Add(2*time.Minute), 10)
	if len(due) != 2 || due[0].Subject != "o-1" || due[0].Sequence != 3 || due[1].Subject != "o-2" {
		t.Fatalf("due after the dead one: %+v", due)
	}
	back, err := r.Redeliver(ctx, sub.ID, dead.ID, now.Add(time.Hour))
	if err != nil || back.Status != domain.DeliveryPending || back.Attempts != 0 || !back.NextAttemptAt.Equal(now.Add(time.Hour)) || back.RedeliveredAt == nil {
		t.Fatalf("redeliver: %+v, %v", back, err)
	}
	_, err = r.Redeliver(ctx, sub.ID, "delivery-none", now)
	wantCode(t, "redeliver of a missing delivery", err, domain.ENOTFOUND)
}
