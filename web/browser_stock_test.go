package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserStock: what the storefront says about stock. A product the
// admin counts down to 0 is badged sold out on the category grid and the
// product page once the feeds have carried the status, and its "Add to
// cart" is disabled with the reason; a checkout the stock cannot serve is
// explained in words that name the product, with its lines flagged at
// checkout and on the cart.
func TestBrowserStock(t *testing.T) {
	base, browser := startBrowser(t)

	t.Run("SoldOutBadgeAndDisabledAdd", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("stella", "Stella Admin", true)
		category := p.firstCategory()
		p.createProduct("lamp-sold-out", "Brass Desk Lamp", category, 7)

		// The admin's stock control counts it down to 0.
		p.goTo("#/admin?product=lamp-sold-out")
		p.waitHeading("Admin")
		p.waitText("[data-testid=admin-stock]", "has 7 units available")
		p.fill("#newStock", "0")
		p.click("#saveStock")
		p.waitText("[data-testid=admin-stock]", "now has 0 units available: sold out")

		// The inventory feed copies the status onto the product, the
		// catalog feed onto its productsByCategory item: the category
		// page's badge comes with the copy, at no extra read.
		card := fmt.Sprintf(`.products li[data-product=%s]`, js("lamp-sold-out"))
		p.reloadUntil("#/c/"+category, "a sold-out badge on the category page",
			fmt.Sprintf(`document.querySelector(%s)?.textContent === "Sold out"`, js(card+" [data-testid=availability]")))
		p.assertOneRead(`^GET /v1/categories/[^/]+/products$`)

		p.click(card + " a.card-title")
		p.waitHeading("Brass Desk Lamp")
		p.assertOneRead(`^GET /v1/products/lamp-sold-out$`)
		if got, want := p.text(".product-main [data-testid=availability]"), "Sold out"; got != want {
			p.fail("the product page's badge says %q, want %q", got, want)
		}
		p.waitTrue("a disabled add to cart", `document.querySelector("form.buy button[type=submit]").disabled`, waitTimeout)
		reason, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
			const b = document.querySelector("form.buy button[type=submit]");
			const id = b.getAttribute("aria-describedby");
			return id ? document.getElementById(id)?.textContent ?? "" : "";
		})()`))
		if err != nil {
			p.fail("reading the reason: %v", err)
		}
		if want := "Sold out"; len(reason) < len(want) || reason[:len(want)] != want {
			p.fail("the disabled button is described by %q, want a reason starting %q", reason, want)
		}
	})

	t.Run("OutOfStockAtCheckoutNamesTheProduct", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("otto", "Otto Admin", true)
		p.createProduct("lamp-two-left", "Reading Lamp", p.firstCategory(), 2)

		p.goTo("#/p/lamp-two-left")
		p.waitHeading("Reading Lamp")
		if got, want := p.text(".product-main [data-testid=availability]"), "Only a few left"; got != want {
			p.fail("the product page's badge says %q, want %q", got, want)
		}
		p.fill("#qty", "3")
		p.click("form.buy button[type=submit]")
		p.waitText("#status", "In your cart: 3 × Reading Lamp")

		p.goTo("#/checkout")
		p.waitHeading("Checkout")
		p.fill("#line1", "1 Main Street")
		p.fill("#city", "Berlin")
		p.fill("#postalCode", "10115")
		p.assertDefaultMethod()
		p.click("main form button[type=submit]")
		p.waitText("#status", "Only 2 left of Reading Lamp (you asked for 3)")
		line := fmt.Sprintf(`.summary li[data-product=%s]`, js("lamp-two-left"))
		p.waitText(line+" [data-testid=short]", "Only 2 left of Reading Lamp")

		// The cart flags the line too, until its quantity changes.
		p.click(`a[href="#/cart"]`)
		p.waitHeading("Your cart")
		cartLine := fmt.Sprintf(`.line[data-product=%s]`, js("lamp-two-left"))
		p.waitText(cartLine+" [data-testid=short]", "Only 2 left of Reading Lamp (you asked for 3)")
		if got, want := p.value(cartLine+" .line-qty input"), "3"; got != want {
			p.fail("the cart line's quantity = %q after the refused checkout, want it unchanged at %q", got, want)
		}
		p.fill(cartLine+" .line-qty input", "2")
		p.click(cartLine + " .line-qty button[type=submit]")
		p.waitText("#status", "Quantity of Reading Lamp is now 2")
		p.waitTrue("the flag gone", fmt.Sprintf(`document.querySelector(%s) === null`, js(cartLine+" [data-testid=short]")), waitTimeout)

		// Two can be bought.
		p.goTo("#/checkout")
		p.waitHeading("Checkout")
		p.fill("#line1", "1 Main Street")
		p.fill("#city", "Berlin")
		p.fill("#postalCode", "10115")
		p.assertDefaultMethod()
		p.click("main form button[type=submit]")
		p.waitHeading("Order details")
	})

	// The admin splits a product's stock into shards and merges it back:
	// the units of each shard are shown, the count says so while it is
	// split, and every unit is back in one shard after the merge.
	t.Run("SplitAndMergeTheStock", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("sol", "Sol Admin", true)
		p.createProduct("lamp-flash", "Flash Lamp", p.firstCategory(), 10)
		p.goTo("#/admin?product=lamp-flash")
		p.waitHeading("Admin")
		p.waitText("[data-testid=admin-stock]", "has 10 units available")
		p.fill("#stockShards", "4")
		p.click("#saveShards")
		p.waitText("[data-testid=admin-shards]", "4 shards (units per shard: 3, 3, 2, 2)")
		p.waitText("[data-testid=admin-stock]", "Split into 4 shards")
		p.fill("#stockShards", "1")
		p.click("#saveShards")
		p.waitText("[data-testid=admin-shards]", "1 shard (units per shard: 10, 0, 0, 0)")
		p.waitText("[data-testid=admin-stock]", "has 10 units available: in stock.")
	})
}

// firstCategory returns the id of the first category, read by the page.
func (p *page) firstCategory() string {
	p.t.Helper()
	id, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](
		`fetch("/v1/categories").then(r => r.json()).then(d => d.items[0].id)`, chromedp.EvalAwaitPromise))
	if err != nil || id == "" {
		p.fail("reading the categories: %v", err)
	}
	return id
}

// createProduct creates a product with stock units, as the signed-in
// admin, through the API.
func (p *page) createProduct(id, name, category string, stock int) {
	p.t.Helper()
	status, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](fmt.Sprintf(
		`fetch("/v1/products", {method: "POST",
		  headers: {"Authorization": "Bearer " + localStorage.getItem("shop.token"), "Content-Type": "application/json"},
		  body: JSON.stringify({productId: %s, name: %s, priceCents: 2500, categoryId: %s, stock: %d})}).then(r => r.status)`,
		js(id), js(name), js(category), stock), chromedp.EvalAwaitPromise))
	if err != nil || status != 201 {
		p.fail("creating product %s: status %d, %v", id, status, err)
	}
}

// reloadUntil renders the screen at hash again until cond holds: for what
// a change feed brings, which no single render waits for. Each render
// adds read=N to the hash's query, which the screens ignore.
func (p *page) reloadUntil(hash, what, cond string) {
	p.t.Helper()
	deadline := time.Now().Add(feedTimeout)
	sep := "?"
	if strings.Contains(hash, "?") {
		sep = "&"
	}
	for reads := 1; ; reads++ {
		p.goTo(fmt.Sprintf("%s%sread=%d", hash, sep, reads))
		p.waitTrue("the screen "+hash, `!document.querySelector("main[aria-busy]") && document.querySelector("main h1") !== null`, waitTimeout)
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](cond))
		if err != nil {
			p.fail("checking %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.fail("after %v still no %s", feedTimeout, what)
		}
		time.Sleep(250 * time.Millisecond) // the polling interval, not an assertion
	}
}
