package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium against the whole shop served
// in process (newShop): the frontend, the API, the feed workers and a temp
// embedded store. They wait with deadlines on what the page shows, never
// with fixed sleeps.

const (
	flowTimeout = 45 * time.Second // one whole flow
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

// page is one tab on the shop, with the helpers the flows share.
type page struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// openPage loads the shop in the browser's tab; screens are then reached
// by changing the hash, as a visitor's clicks do.
func openPage(t *testing.T, browser context.Context, base string) *page {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, flowTimeout)
	t.Cleanup(cancel)
	p := &page{t: t, ctx: ctx, base: base}
	p.do("load the shop", chromedp.Navigate(base+"/#/"))
	return p
}

// fail saves a screenshot of the page, logs where it is, and stops the test.
func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	dir := os.Getenv("SHOP_SCREENSHOT_DIR")
	if dir == "" {
		dir = "testdata-out"
	}
	// A fresh context: the flow's own may be what ran out.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err == nil {
		name := strings.NewReplacer("/", "_", " ", "_").Replace(p.t.Name()) + ".png"
		path := filepath.Join(dir, name)
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err == nil {
			abs, _ := filepath.Abs(path)
			p.t.Logf("screenshot of the failing page: %s", abs)
		}
	}
	if err != nil {
		p.t.Logf("no screenshot: %v", err)
	}
	p.t.Fatal(msg)
}

// do runs actions that return nothing.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.fail("%s: %v", what, err)
	}
}

// js quotes s as a JavaScript string literal (JSON strings are).
func js(s string) string { return strconv.Quote(s) }

// waitTrue polls a JavaScript condition in the page until it holds.
func (p *page) waitTrue(what, cond string, timeout time.Duration) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](cond,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		p.fail("waiting for %s: %v", what, err)
	}
}

// waitText waits until the element matching sel contains text.
func (p *page) waitText(sel, text string) {
	p.t.Helper()
	p.waitTrue(fmt.Sprintf("%q in %s", text, sel),
		fmt.Sprintf(`[...document.querySelectorAll(%s)].some(e => e.textContent.includes(%s))`, js(sel), js(text)),
		waitTimeout)
}

// waitHeading waits for the screen whose h1 starts with title.
func (p *page) waitHeading(title string) {
	p.t.Helper()
	p.waitTrue("heading "+title,
		fmt.Sprintf(`(document.querySelector("main h1")?.textContent || "").startsWith(%s) && !document.querySelector("main[aria-busy]")`, js(title)),
		waitTimeout)
}

// text returns the text of the first element matching sel.
func (p *page) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`document.querySelector(%s)?.textContent ?? ""`, js(sel))))
	if err != nil {
		p.fail("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// click clicks the first element matching sel once it is visible, after
// scrolling it to the middle of the window (clear of the sticky cost bar).
func (p *page) click(sel string) {
	p.t.Helper()
	p.do("click "+sel,
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).scrollIntoView({block: "center"})`, js(sel))),
		chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// fill replaces the value of an input by typing, as a person would. It
// empties the field in script first: chromedp.Clear resets only the value
// attribute, not a value the page has set.
func (p *page) fill(sel, value string) {
	p.t.Helper()
	p.do("fill "+sel,
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).value = ""`, js(sel))),
		chromedp.SendKeys(chromedp.CSS(sel), value))
}

// goTo moves to a screen by its hash, without reloading the page.
func (p *page) goTo(hash string) {
	p.t.Helper()
	p.do("go to "+hash, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %s`, js(hash))))
}

// assertOneRead checks the cost panel once it reports the request that
// rendered the screen (its label matches request, a regular expression):
// the screen took ONE store operation, the rule the whole model is built for.
func (p *page) assertOneRead(request string) {
	p.t.Helper()
	p.waitTrue("the cost of "+request,
		fmt.Sprintf(`new RegExp(%s).test(document.querySelector(".cost-label")?.textContent || "")`, js(request)),
		waitTimeout)
	if got := p.text("[data-testid=cost]"); !strings.HasPrefix(got, "1 store op ·") {
		p.fail("%s: cost panel says %q, want it to start with %q", request, got, "1 store op ·")
	}
}

// hashID returns the last segment of the page's hash: the id of the
// product or order on screen.
func (p *page) hashID() string {
	p.t.Helper()
	h, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`decodeURIComponent(location.hash.split("?")[0].split("/").pop())`))
	if err != nil {
		p.fail("reading location.hash: %v", err)
	}
	return h
}

// productIDOf returns the data-product attribute of the first element
// matching sel: the product id of a cart line.
func (p *page) productIDOf(sel string) string {
	p.t.Helper()
	id, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](
		fmt.Sprintf(`document.querySelector(%s)?.dataset.product ?? ""`, js(sel))))
	if err != nil || id == "" {
		p.fail("reading the product id of %s: %v", sel, err)
	}
	return id
}

// value returns the value of an input.
func (p *page) value(sel string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		p.fail("reading %s: %v", sel, err)
	}
	return v
}

// signIn uses the sign-in screen (the dev token endpoint).
func (p *page) signIn(userID, name string, admin bool) {
	p.t.Helper()
	p.goTo("#/signin")
	p.waitHeading("Sign in")
	p.fill("#userId", userID)
	p.fill("#name", name)
	p.fill("#email", userID+"@example.com")
	if admin {
		p.click("#admin")
	}
	p.click("main form button[type=submit]")
	p.waitText("#status", "Signed in as "+name)
}

var digits = regexp.MustCompile(`\d`)

// cents reads a displayed price ("$1,234.50") as minor units.
func cents(t *testing.T, shown string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.Join(digits.FindAllString(shown, -1), ""), 10, 64)
	if err != nil {
		t.Fatalf("price %q: %v", shown, err)
	}
	return n
}

func TestBrowserShop(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests start chromium; skipped with -short")
	}
	chromiumPath(t)
	base := newShop(t)
	browser := newBrowser(t)
	// The first Run starts the browser; a failure here is the environment.
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}

	t.Run("BrowseAddCheckoutHistory", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("ann", "Ann Buyer", false)

		p.goTo("#/")
		p.waitHeading("Categories")
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
	})

	t.Run("StaleCartIsExplained", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("cleo", "Cleo Twotabs", false)
		p.goTo("#/")
		p.waitHeading("Categories")
		p.click(".categories a")
		p.waitText(".products .card-title", "")
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
		p.waitHeading("Categories")
		p.click(".categories li:last-child a")
		p.waitText(".products .card-title", "")
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
