package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// TestBrowserWebhooks: the admin's Webhooks screen. A subscription is
// created with its secret shown once, listed with its URL, types and
// state, paused and resumed, its dead letter redelivered, its secret
// rotated (the old one's expiry said), and deleted; the store agrees at
// each step.
func TestBrowserWebhooks(t *testing.T) {
	chromiumPath(t)
	base, st := newShopStore(t)
	browser := newBrowser(t)
	hooks := repo.NewWebhooks(st)
	p := openPage(t, browser, base)
	p.signIn("wanda", "Wanda Admin", true)

	p.goTo("#/admin/webhooks")
	p.waitHeading("Webhooks")
	p.assertOneRead(`^GET /v1/admin/webhooks$`)
	p.waitText("[data-testid=subscriptions]", "No subscriptions yet.")

	// Create: order.placed is ticked by default; add product.deleted.
	p.fill("#hookUrl", "https://receiver.example.com/hooks")
	p.fill("#hookDescription", "Fulfilment")
	p.click(`input[value="product.deleted"]`)
	p.click("#hookCreate button[type=submit]")
	p.waitText("[data-testid=secret]", "whsec_")
	secret := p.text("[data-testid=secret]")
	p.waitText("[data-testid=subscriptions]", "https://receiver.example.com/hooks")
	id := p.evalString(`document.querySelector("[data-subscription]").dataset.subscription`)
	row := fmt.Sprintf("tr[data-subscription=%s]", js(id))
	if got, want := p.text(row+" td"), "order.placed, product.deleted"; got != want {
		p.fail("the row's event types = %q, want %q", got, want)
	}
	if got := p.text(row + " .hook-state"); got != "active" {
		p.fail("the row's state = %q, want active", got)
	}
	sub, err := hooks.Get(p.ctx, id)
	if err != nil {
		p.fail("reading the subscription: %v", err)
	}
	if valid := sub.ValidSecrets(time.Now()); len(valid) != 1 || valid[0] != secret {
		p.fail("the screen showed the secret %q, the store signs with %q", secret, valid)
	}
	p.audit("webhooks")

	// Pause: the row says so, and the store holds it.
	p.click(row + " [data-action=pause]")
	p.waitText(row+" .hook-state", "paused")
	p.waitText(row+" [data-action=pause]", "Resume")
	if sub, err := hooks.Get(p.ctx, id); err != nil || !sub.Paused {
		p.fail("after the pause the store has paused=%v (%v)", sub.Paused, err)
	}

	// A dead letter, as the dispatcher leaves one after its last retry.
	// The subscription is paused, so nothing sends it once redelivered.
	at := time.Now().Add(-time.Hour).UTC()
	dead := domain.Delivery{SubscriptionID: id, EventID: "event-o-9-000000000003", EventType: domain.EventOrderPlaced,
		Subject: "o-9", Sequence: 3, Status: domain.DeliveryDead, Attempts: 8, NextAttemptAt: at, CreatedAt: at,
		LastStatus: 500, LastError: "receiver answered 500", Body: json.RawMessage(`{"id":"event-o-9-000000000003"}`)}
	if err := hooks.CreateDelivery(p.ctx, dead); err != nil {
		p.fail("writing a dead delivery: %v", err)
	}
	deliveryRow := fmt.Sprintf("tr[data-delivery=%s]", js(domain.DeliveryID(dead.EventID)))
	p.click(row + " [data-action=dead]")
	p.waitText("[data-testid=deliveries]", "event-o-9-000000000003")
	p.waitText(deliveryRow, "receiver answered 500")
	p.click(deliveryRow + " [data-action=redeliver]")
	p.waitText(deliveryRow+" [data-testid=redelivered]", "Sent again")
	p.waitText(deliveryRow+" .delivery-status", "pending")
	if d, err := hooks.GetDelivery(p.ctx, id, domain.DeliveryID(dead.EventID)); err != nil || d.Status != domain.DeliveryPending {
		p.fail("after the redelivery the store has %q (%v), want pending", d.Status, err)
	}
	p.click(row + " [data-action=dead]")
	p.waitText("[data-testid=deliveries]", "No dead letters.")
	p.click(row + " [data-action=deliveries]")
	p.waitText(deliveryRow+" .delivery-status", "pending")

	// Resume.
	p.click(row + " [data-action=pause]")
	p.waitText(row+" .hook-state", "active")

	// Rotate: a new secret, shown once, and when the old one stops.
	p.click(row + " [data-action=rotate]")
	p.waitText(".hook-detail", "The previous secret still signs until")
	rotated := p.text(".hook-detail [data-testid=secret]")
	if rotated == secret || !strings.HasPrefix(rotated, "whsec_") {
		p.fail("rotated secret %q, want a new one (was %q)", rotated, secret)
	}
	if sub, err := hooks.Get(p.ctx, id); err != nil || len(sub.ValidSecrets(time.Now())) != 2 || sub.ValidSecrets(time.Now())[0] != rotated {
		p.fail("after the rotation the store signs with %v (%v), want the new secret and the old", sub.ValidSecrets(time.Now()), err)
	}

	// Delete, confirmed.
	p.do("accept the confirmation", chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`))
	p.click(row + " [data-action=delete]")
	p.waitText("[data-testid=subscriptions]", "No subscriptions yet.")
	if _, err := hooks.Get(p.ctx, id); !domain.IsCode(err, domain.ENOTFOUND) {
		p.fail("after the delete the store answers %v, want not found", err)
	}
}
