package web_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// homeHeading is the home page's h1.
const homeHeading = "Well made, fairly priced"

// The browser tests drive Debian's chromium against the whole shop served
// in process (newShop): the frontend, the API, the feed workers and a temp
// embedded store. They wait with deadlines on what the page shows, never
// with fixed sleeps.

const (
	flowTimeout = 60 * time.Second // one whole flow, with room for a loaded CI machine
	waitTimeout = 15 * time.Second // one thing to appear on the page
	feedTimeout = 30 * time.Second // a price to reach a cart through the feed
)

// chromiumPath finds the browser; the tests skip only when there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary (looked for chromium, chromium-browser, google-chrome on PATH): " +
		"install it with `apt-get install -y chromium` to run the browser tests")
	return ""
}

// newBrowser starts one headless chromium with a fresh profile and returns
// a context for a new tab in it.
// startBrowser starts a shop and a headless Chromium for a browser test
// (skipped without chromium), and returns the shop's URL and the browser.
// The first navigation starts the browser: a failure there is the
// environment, not the shop.
func startBrowser(t *testing.T) (base string, browser context.Context) {
	t.Helper()
	chromiumPath(t)
	base, browser = newShop(t), newBrowser(t)
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return base, browser
}

func newBrowser(t *testing.T) context.Context {
	t.Helper()
	exe := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	return ctx
}

func TestBrowserShop(t *testing.T) {
	base, browser := startBrowser(t)

	t.Run("CostPanelText", func(t *testing.T) {
		p := openPage(t, browser, base)
		tests := []struct {
			name    string
			headers string // a JavaScript object of response headers
			want    string
		}{
			{"OneRead", `{"X-Store-Operations": "1", "X-Request-Charge": "1.00", "Server-Timing": 'store;dur=0.31;desc="1 op, 1.00 RU"'}`,
				"1 store op · 1.00 RU · 0.31 ms"},
			{"Estimated", `{"X-Store-Operations": "1", "X-Request-Charge": "1.00", "X-Request-Charge-Estimated": "true", "Server-Timing": 'store;dur=0.31;desc="1 op, 1.00 RU"'}`,
				"1 store op · 1.00 RU (estimate) · 0.31 ms"},
			{"SeveralOps", `{"X-Store-Operations": "6", "X-Request-Charge": "27.30", "Server-Timing": 'app;dur=3, store;dur=15.05;desc="6 ops, 27.30 RU"'}`,
				"6 store ops · 27.30 RU · 15.05 ms"},
			{"NoTiming", `{"X-Store-Operations": "0", "X-Request-Charge": "0.00"}`,
				"0 store ops · 0.00 RU"},
			{"NoCostHeaders", `{}`, "no store cost reported"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(
					`Promise.all([import("/api.js"), import("/ui.js")]).then(([api, ui]) => ui.costText(api.readCost(new Headers(%s))))`,
					tt.headers), chromedp.EvalAwaitPromise))
				if err != nil {
					p.fail("costText: %v", err)
				}
				if got != tt.want {
					t.Errorf("cost panel = %q, want %q", got, tt.want)
				}
			})
		}
	})

	t.Run("BrowseAddCheckoutHistory", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("ann", "Ann Buyer", false)

		p.goTo("#/")
		p.waitHeading(homeHeading)
		p.assertOneRead(`^GET /v1/categories$`)
		category := p.text(".categories .card-title")
		p.click(".categories a")
		p.waitHeading(category)
		p.assertOneRead(`^GET /v1/categories/[^/]+/products$`)

		p.waitText(".products .card-title", "")
		product := p.text(".products a.card-title")
		p.click(".products a.card-title")
		p.waitHeading(product)
		p.assertOneRead(`^GET /v1/products/[^/]+$`)
		unit := cents(t, p.text("[data-testid=price]"))

		p.fill("#qty", "2")
		p.click("form.buy button[type=submit]")
		p.waitText("#status", "In your cart: 2 × "+product)

		p.click(`header a[href="#/cart"]`)
		p.waitHeading("Your cart")
		p.assertOneRead(`^GET /v1/cart$`)
		p.waitText(".line .line-name", product)
		if got, want := p.text("[data-testid=item-count]"), "2"; got != want {
			p.fail("cart item count = %q, want %q", got, want)
		}
		subtotal := cents(t, p.text("[data-testid=subtotal]"))
		if got, want := subtotal, 2*unit; got != want {
			p.fail("cart subtotal = %d cents, want 2 × %d", got, unit)
		}

		p.click(`a[href="#/checkout"]`)
		p.waitHeading("Checkout")
		p.fill("#line1", "1 Main Street")
		p.fill("#city", "Berlin")
		p.fill("#postalCode", "10115")
		p.fill("#country", "DE")
		p.assertDefaultMethod()
		p.click("main form button[type=submit]")
		p.waitHeading("Order details")
		p.assertOneRead(`^GET /v1/orders/[^/]+$`)
		orderID := p.hashID()
		if got := cents(t, p.text("[data-testid=order-total]")); got != subtotal {
			p.fail("order total = %d cents, want the cart subtotal %d", got, subtotal)
		}

		p.click(`header a[href="#/orders"]`)
		p.waitHeading("Your orders")
		p.assertOneRead(`^GET /v1/orders$`)
		p.waitTrue("the new order in the history", fmt.Sprintf(
			`document.querySelector(".orders a[href=" + CSS.escape("#/orders/" + %s) + "]") !== null`, js(orderID)),
			waitTimeout)

		// The pre-computed summary was written in the checkout's batch.
		p.click(`header a[href="#/account"]`)
		p.waitHeading("Your account")
		p.assertOneRead(`^GET /v1/me/summary$`)
		if got, want := p.text("[data-testid=total-orders]"), "1"; got != want {
			p.fail("account shows %q orders, want %q", got, want)
		}
		if got := cents(t, p.text("[data-testid=total-spent]")); got != subtotal {
			p.fail("account shows %d cents spent, want the order's %d", got, subtotal)
		}
	})

	t.Run("StaleCartIsExplained", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("cleo", "Cléo Twotabs", false)
		p.goTo("#/")
		p.waitHeading(homeHeading)
		category := p.text(".categories .card-title")
		p.click(".categories a")
		p.waitHeading(category)
		product := p.text(".products a.card-title")
		p.click(".products a.card-title")
		p.waitHeading(product)
		p.click("form.buy button[type=submit]")
		p.waitText("#status", "In your cart: 1 × "+product)

		p.goTo("#/cart")
		p.waitHeading("Your cart")
		p.waitText(".line .line-name", product)
		// Another tab changes the cart behind this page's back: the ETag
		// this page holds is now stale.
		p.do("change the cart from elsewhere", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`fetch("/v1/cart/items/" + encodeURIComponent(%s), {method: "PUT",
			  headers: {"Authorization": "Bearer " + localStorage.getItem("shop.token"), "Content-Type": "application/json"},
			  body: JSON.stringify({quantity: 3})}).then(r => r.status)`, js(p.productIDOf(".line[data-product]"))),
			chromedp.EvalAwaitPromise))
		p.fill(".line-qty input", "2")
		p.click(".line-qty button[type=submit]")
		p.waitText("#status", "Your cart changed in another tab; we reloaded it")
		if got, want := p.value(".line-qty input"), "3"; got != want {
			p.fail("after the reload the quantity shows %q, want the other tab's %q", got, want)
		}
	})

	t.Run("AdminPriceChangeReachesCart", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("root", "Rita Admin", true)

		// A product in the admin's own cart, so the page can watch it.
		p.goTo("#/")
		p.waitHeading(homeHeading)
		category := p.text(".categories li:last-child .card-title")
		p.click(".categories li:last-child a")
		p.waitHeading(category)
		product := p.text(".products li:last-child a.card-title")
		p.click(".products li:last-child a.card-title")
		p.waitHeading(product)
		productID := p.hashID()
		p.fill("#qty", "1")
		p.click("form.buy button[type=submit]")
		p.waitText("#status", "In your cart: 1 × "+product)

		p.click(`a[href^="#/admin?product="]`)
		p.waitHeading("Admin")
		p.waitText("[data-testid=admin-product]", product)
		old := cents(t, p.value("#newPrice"))
		newPrice := old + 123
		p.fill("#newPrice", fmt.Sprintf("%d.%02d", newPrice/100, newPrice%100))
		p.click("#savePrice")
		p.waitText("[data-testid=admin-product]", "now costs")

		// The products feed carries the price into the cart; the cart page
		// shows it once it has arrived. Reload it until then.
		line := fmt.Sprintf(`.line[data-product=%s] [data-testid=unit-price]`, js(productID))
		deadline := time.Now().Add(feedTimeout)
		for reads := 1; ; reads++ {
			p.goTo("#/cart?read=" + strconv.Itoa(reads))
			p.waitText(".line .line-name", product)
			if shown := cents(t, p.text(line)); shown == newPrice {
				break
			} else if time.Now().After(deadline) {
				p.fail("after %v the cart still shows %d cents for %s, want %d", feedTimeout, shown, product, newPrice)
			}
			time.Sleep(250 * time.Millisecond) // the polling interval, not an assertion
		}
		p.assertOneRead(`^GET /v1/cart$`)
	})
}
