package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserPayment: the checkout pays with a test payment method, and
// each answer of the checkout workflow is said in words. A declined card
// leaves the cart as it was and says why; a placed order's page shows the
// authorization and every move of the order; an answer still in progress
// (202) is followed until the order rests; a shipped order is cancelled
// with a refund.
func TestBrowserPayment(t *testing.T) {
	base, browser := startBrowser(t)

	// One product with stock enough for every flow: the sample's first
	// product may have only a few units.
	setup := openPage(t, browser, base)
	setup.signIn("pia", "Pia Admin", true)
	setup.createProduct(payProduct, payProductName, setup.firstCategory(), 100)

	t.Run("DeclinedCardKeepsTheCart", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("dora", "Dora Declined", false)
		p.buyProduct(payProduct, payProductName, 2)
		p.startCheckout("pm_card_chargeDeclinedInsufficientFunds")
		p.waitText("#status", "Payment declined (insufficient funds)")
		p.waitText("#paymentMethod-error", "insufficient funds")
		if status := p.text("#status"); !strings.Contains(status, "your cart is unchanged") {
			p.fail("the decline says %q, want it to say the cart is unchanged", status)
		}
		invalid, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("#paymentMethod").getAttribute("aria-invalid") ?? ""`))
		if err != nil || invalid != "true" {
			p.fail("the payment method is not marked invalid after the decline (%q, %v)", invalid, err)
		}
		if got := p.text("main h1"); got != "Checkout" {
			p.fail("after the decline the page shows %q, want the checkout still", got)
		}
		p.audit("#/checkout after a decline")
		if got := p.text("[data-testid=cart-count]"); !strings.Contains(got, "2") {
			p.fail("the cart badge says %q after the decline, want 2 items", got)
		}

		p.click(`a[href="#/cart"]`)
		p.waitHeading("Your cart")
		p.waitText(".line .line-name", payProductName)
		if got, want := p.value(".line-qty input"), "2"; got != want {
			p.fail("after the decline the cart line's quantity is %q, want %q", got, want)
		}

		// Another card pays for the same cart.
		p.startCheckout("pm_card_mastercard")
		p.waitHeading("Order details")
		p.waitText("[data-testid=payment-status]", "authorized")
	})

	t.Run("PlacedOrderShowsAuthorizedAndHistory", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("paul", "Paul Pays", false)
		p.buyProduct(payProduct, payProductName, 1)
		p.checkout()
		p.waitText("#status", "is placed")
		p.assertOneRead(`^GET /v1/orders/[^/]+$`)
		if got, want := p.text("[data-testid=payment-status]"), "authorized"; got != want {
			p.fail("the placed order's payment is %q, want %q", got, want)
		}
		if got := p.text("main .payment"); !strings.Contains(got, "held on your card") {
			p.fail("the payment line says %q, want it to say the amount is held", got)
		}
		rows := p.historyRows()
		want := []string{"new order → pending", "pending → reserved", "reserved → authorized", "authorized → placed"}
		if strings.Join(rows, "; ") != strings.Join(want, "; ") {
			p.fail("the history shows %q, want %q", rows, want)
		}
		times, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("[data-testid=history] tbody time")].map(t => t.getAttribute("datetime") && t.textContent)`))
		if err != nil || len(times) != len(want) {
			p.fail("the history's times: %q, %v", times, err)
		}
		for _, s := range times {
			if s == "" {
				p.fail("a move of the history has no time: %q", times)
			}
		}
		if p.text("main button.danger") != "Cancel this order" {
			p.fail("a placed order offers %q, want %q", p.text("main button.danger"), "Cancel this order")
		}

		// The history list shows the authorization its status settles.
		id := p.hashID()
		p.click(`header a[href="#/orders"]`)
		p.waitHeading("Your orders")
		row := fmt.Sprintf(`document.querySelector(".orders a[href=" + CSS.escape("#/orders/" + %s) + "]").closest("li")`, js(id))
		p.waitTrue("the order's row", row+` !== null`, waitTimeout)
		got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](row+`.querySelector("[data-testid=payment-status]")?.textContent ?? ""`))
		if err != nil || got != "payment authorized" {
			p.fail("the order's row says %q (%v), want %q", got, err, "payment authorized")
		}
	})

	t.Run("SlowPaymentIsFollowed", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("sam", "Sam Slow", false)
		p.buyProduct(payProduct, payProductName, 1)
		// The shop answers within its 2 s bound here: the page's fetch
		// turns the 201 into the 202 a slow provider would have caused.
		p.answerInProgress()
		defer p.restoreFetch()
		p.startCheckout("")
		p.waitHeading("Order details")
		p.assertSaid("Your payment is being processed…")
		if polls := p.checkoutPolls(); polls < 1 {
			p.fail("the page read the order %d times before leaving the checkout, want at least 1", polls)
		}
		p.waitText("#status", "is placed")
		p.waitText("[data-testid=payment-status]", "authorized")
	})

	t.Run("SlowDeclineIsFollowed", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("sid", "Sid Slow", false)
		p.buyProduct(payProduct, payProductName, 1)
		// The 402 becomes a 202 for the order it rejected: reading it, the
		// page finds it rejected and says why.
		p.answerInProgress()
		defer p.restoreFetch()
		p.startCheckout("pm_card_chargeDeclinedExpiredCard")
		p.waitText("#status", "Payment declined (expired card)")
		p.waitText("#paymentMethod-error", "Your card has expired.")
		p.assertSaid("Your payment is being processed…")
		if got := p.text("main h1"); got != "Checkout" {
			p.fail("after the decline the page shows %q, want the checkout still", got)
		}
	})

	t.Run("ShippedOrderCancelsWithRefund", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("rhea", "Rhea Refund", true)
		p.buyProduct(payProduct, payProductName, 1)
		p.checkout()
		id := p.hashID()
		p.apiStatus("ship the order", "PATCH", fmt.Sprintf("/v1/admin/orders/rhea/%s", id), `{"status": "shipped"}`, 200)
		p.goTo("#/orders/" + id + "?read=shipped")
		p.waitHeading("Order details")
		p.waitText("main .badge", "shipped")
		if got, want := p.text("[data-testid=payment-status]"), "captured"; got != want {
			p.fail("the shipped order's payment is %q, want %q", got, want)
		}
		if got, want := p.text("main button.danger"), "Cancel and refund this order"; got != want {
			p.fail("a shipped order offers %q, want %q", got, want)
		}
		p.click("main button.danger")
		p.waitText("#cancel-q", "Cancel this order and refund your payment?")
		p.click("[data-testid=confirm-cancel]")
		p.waitText("#status", "Your order is cancelled and your payment refunded.")
		p.waitText("[data-testid=payment-status]", "refunded")
		if rows := p.historyRows(); rows[len(rows)-1] != "shipped → cancelled" {
			p.fail("the history ends %q, want the cancel of the shipped order", rows[len(rows)-1])
		}
	})
}

// The product the payment flows buy.
const (
	payProduct     = "pay-enamel-mug"
	payProductName = "Enamel Camp Mug"
)

// buyProduct puts n of product id, named name, in the cart.
func (p *page) buyProduct(id, name string, n int) {
	p.t.Helper()
	p.goTo("#/p/" + id)
	p.waitHeading(name)
	p.fill("#qty", fmt.Sprint(n))
	p.click("form.buy button[type=submit]")
	p.waitText("#status", fmt.Sprintf("In your cart: %d × %s", n, name))
}

// historyRows reads the order page's history as "from → to" lines.
func (p *page) historyRows() []string {
	p.t.Helper()
	rows, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("[data-testid=history] tbody tr")].map(r => r.cells[1].textContent + " → " + r.cells[2].textContent)`))
	if err != nil || len(rows) == 0 {
		p.fail("reading the history: %q, %v", rows, err)
	}
	return rows
}

// answerInProgress makes the page's fetch answer the checkout 202 with
// the order in progress, as the shop does when the payment provider is
// slow: a placed order comes back "authorized", a declined card's 402
// becomes its rejected order, "reserved". The page must then read the
// order to learn how it ended. It also counts the order reads made from
// the checkout screen and logs every status line (checkoutLog).
func (p *page) answerInProgress() {
	p.t.Helper()
	p.do("answer the checkout in progress", chromedp.Evaluate[chromedp.Void](`(() => {
		const real = window.realFetch = window.fetch;
		const log = window.checkoutLog = { polls: 0, said: [] };
		const status = document.getElementById("status");
		new MutationObserver(() => log.said.push(status.textContent))
			.observe(status, { childList: true, characterData: true, subtree: true });
		window.fetch = async (url, init = {}) => {
			const method = (init.method || "GET").toUpperCase();
			if (method === "GET" && /^\/v1\/orders\/[^/?]+$/.test(url) && location.hash.startsWith("#/checkout")) log.polls++;
			const res = await real(url, init);
			if (method !== "POST" || url !== "/v1/checkout") return res;
			let order;
			if (res.status === 402) {
				const list = await real("/v1/orders?limit=1", { headers: { Authorization: init.headers.Authorization } }).then((r) => r.json());
				order = { ...list.items[0], status: "reserved" };
			} else {
				order = { ...(await res.json()), status: "authorized" };
			}
			const headers = new Headers(res.headers);
			headers.set("Content-Type", "application/json");
			headers.set("Location", "/v1/orders/" + order.id);
			return new Response(JSON.stringify(order), { status: 202, headers });
		};
	})()`))
}

// restoreFetch undoes answerInProgress: a later flow may reuse the page.
func (p *page) restoreFetch() {
	p.t.Helper()
	p.do("restore fetch", chromedp.Evaluate[chromedp.Void](`if (window.realFetch) window.fetch = window.realFetch`))
}

// checkoutPolls is how many order reads the checkout screen made.
func (p *page) checkoutPolls() int {
	p.t.Helper()
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`window.checkoutLog.polls`))
	if err != nil {
		p.fail("reading the poll count: %v", err)
	}
	return n
}

// assertSaid fails unless the status line said text at some point since
// answerInProgress.
func (p *page) assertSaid(text string) {
	p.t.Helper()
	said, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`window.checkoutLog.said`))
	if err != nil {
		p.fail("reading the status log: %v", err)
	}
	for _, s := range said {
		if strings.Contains(s, text) {
			return
		}
	}
	p.fail("the status line never said %q; it said %q", text, said)
}

// apiStatus sends one API call with the signed-in user's token and fails
// unless it answers want.
func (p *page) apiStatus(what, method, path, body string, want int) {
	p.t.Helper()
	res, err := chromedp.Run(p.ctx, chromedp.Evaluate[struct {
		Status int
		Body   string
	}](fmt.Sprintf(
		`fetch(%s, {method: %s,
		  headers: {"Authorization": "Bearer " + localStorage.getItem("shop.token"), "Content-Type": "application/json"},
		  body: %s}).then(async (r) => ({status: r.status, body: await r.text()}))`, js(path), js(method), js(body)), chromedp.EvalAwaitPromise))
	if err != nil || res.Status != want {
		p.fail("%s: %s %s answered %d (%v), want %d: %.500s", what, method, path, res.Status, err, want, res.Body)
	}
}

// audit fails the test for every accessibility violation auditJS finds
// on the screen as it is now.
func (p *page) audit(screen string) {
	p.t.Helper()
	violations, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](auditJS))
	if err != nil {
		p.fail("auditing %s: %v", screen, err)
	}
	for _, v := range violations {
		p.t.Errorf("%s: %s", screen, v)
	}
}
