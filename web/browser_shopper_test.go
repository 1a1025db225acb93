package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserShopper: what a shopper meets around the cart and the
// reviews: the first review of a product shows once posted, words typed
// in the search box survive a screen's render, a new tab's cart badge
// shows the cart, a sold-out line keeps the cart from checkout and out of
// the subtotal, and the checkout's field errors are tied to their fields
// and announced.
func TestBrowserShopper(t *testing.T) {
	base, browser := startBrowser(t)

	t.Run("FirstReviewAppears", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("rhea", "Rhea Reviewer", true)
		p.createProduct("mug-unreviewed", "Plain Stoneware Mug", p.firstCategory(), 10)
		p.goTo("#/p/mug-unreviewed/reviews")
		p.waitHeading("Reviews")
		p.waitText("main", "No reviews yet. Be the first.")
		p.choose("#rating", "5")
		p.fill("#title", "Holds the heat")
		p.click("main form button[type=submit]")
		p.waitText("#status", "Thank you: your review is posted.")
		p.waitText("main .reviews .review", "Holds the heat")
		if main := p.text("main"); strings.Contains(main, "No reviews yet") {
			p.fail("after the first review the page still says %q", "No reviews yet. Be the first.")
		}
	})

	t.Run("NoEmptyNewestReviewsHeading", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("uma", "Uma Unreviewed", true)
		p.createProduct("mug-unreviewed-2", "Second Plain Mug", p.firstCategory(), 10)
		p.goTo("#/p/mug-unreviewed-2")
		p.waitHeading("Second Plain Mug")
		if main := p.text("main"); strings.Contains(main, "Newest reviews") {
			p.fail("a product with no reviews shows a %q heading", "Newest reviews")
		}
	})

	t.Run("DoubleClickAddsOnce", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("dora", "Dora Double", false)
		p.openFirstProduct()
		p.do("press Add to cart twice", chromedp.Evaluate[chromedp.Void](
			`(() => { const b = document.querySelector("form.buy button[type=submit]"); b.click(); b.click(); })()`))
		p.waitText("#status", "In your cart: 1 × ")
		p.waitTrue("Add to cart enabled again", `!document.querySelector("form.buy button[type=submit]").disabled`, waitTimeout)
		n := p.evalString(`fetch("/v1/cart", {headers: {"Authorization": "Bearer " + localStorage.getItem("shop.token")}})
			.then(r => r.json()).then(c => String(c.itemCount))`)
		if n != "1" {
			p.fail("a double click put %s items in the cart, want 1", n)
		}
	})

	t.Run("CategorySortsByRating", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.goTo("#/c/coffee-tea")
		p.waitHeading("Coffee & Tea")
		if !p.exists(`.sort a[href$="?sort=rating"]`) {
			p.fail("the category page offers no sort by rating (the API's sort=rating)")
		}
		p.click(`.sort a[href$="?sort=rating"]`)
		p.waitTrue("the rating sort", `document.querySelector(".sort [aria-current]")?.textContent === "rating" && !document.querySelector("main[aria-busy]")`, waitTimeout)
		p.assertOneRead(`^GET /v1/categories/coffee-tea/products$`)
	})

	t.Run("DepartmentsFirstAt360", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.do("set the width", chromedp.EmulateViewport(360, 900))
		t.Cleanup(func() { _ = chromedp.Do(browser, chromedp.EmulateReset()) })
		p.waitHeading(homeHeading)
		above, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](
			`document.querySelector("#cats-h").getBoundingClientRect().top < document.querySelector("#featured-h").getBoundingClientRect().top`))
		if err != nil {
			p.fail("measuring the home page: %v", err)
		}
		if !above {
			p.fail("at 360 px the departments come after the featured cards")
		}
	})

	t.Run("TypedWordsSurviveARender", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.waitHeading(homeHeading)
		// The visitor types while a screen renders (as while app.js loads):
		// the render must leave the words alone.
		p.fill("#search-q", "coffee")
		p.goTo("#/signin")
		p.waitHeading("Sign in")
		p.do("focus the box", chromedp.Evaluate[chromedp.Void](`document.querySelector("#search-q").focus()`))
		p.goTo("#/")
		p.waitHeading(homeHeading)
		if got := p.value("#search-q"); got != "coffee" {
			p.fail("the search box holds %q after a render, want what was typed, %q", got, "coffee")
		}
	})

	t.Run("CartBadgeInANewTab", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("nell", "Nell Newtab", false)
		p.buyFirstProduct(3)
		// A new tab shares the sign-in (localStorage), not the count
		// (sessionStorage): it must read the cart for the badge.
		tab, cancel := chromedp.NewContext(browser)
		t.Cleanup(cancel)
		q := openPage(t, tab, base)
		q.waitHeading(homeHeading)
		q.waitText("#cart-count", "3")
	})

	t.Run("SoldOutLineBlocksCheckout", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("sol", "Sol Stockwatch", true)
		category := p.firstCategory()
		p.createProduct("lamp-last-one", "Last Lamp", category, 1)
		p.createProduct("lamp-plenty", "Plenty Lamp", category, 50)
		for _, id := range []string{"lamp-last-one", "lamp-plenty"} {
			p.goTo("#/p/" + id)
			p.waitTrue("the product "+id, fmt.Sprintf(`location.hash === %s && !document.querySelector("main[aria-busy]") && document.querySelector("form.buy") !== null`, js("#/p/"+id)), waitTimeout)
			p.click("form.buy button[type=submit]")
			p.waitText("#status", "In your cart: 1 × ")
		}
		p.goTo("#/admin?product=lamp-last-one")
		p.waitHeading("Admin")
		p.waitText("[data-testid=admin-stock]", "has 1 unit available")
		p.fill("#newStock", "0")
		p.click("#saveStock")
		p.waitText("[data-testid=admin-stock]", "now has 0 units available")

		// The feed marks the cart line sold out.
		line := fmt.Sprintf(`.line[data-product=%s]`, js("lamp-last-one"))
		p.reloadUntil("#/cart", "a sold-out cart line",
			fmt.Sprintf(`document.querySelector(%s)?.textContent.includes("Sold out") ?? false`, js(line)))
		plenty := cents(t, p.text(fmt.Sprintf(`.line[data-product=%s] .line-total`, js("lamp-plenty"))))
		t.Run("SubtotalLeavesItOut", func(t *testing.T) {
			p := p.in(t)
			if got := cents(t, p.text("[data-testid=subtotal]")); got != plenty {
				p.fail("the subtotal is %d cents, want %d: only the line that can be bought", got, plenty)
			}
		})
		t.Run("GoToCheckoutIsDisabledAndSaysWhy", func(t *testing.T) {
			p := p.in(t)
			disabled, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
				const b = document.querySelector("[data-testid=to-checkout]");
				if (!b || !b.disabled) return "";
				return document.getElementById(b.getAttribute("aria-describedby") || "")?.textContent ?? "";
			})()`))
			if err != nil {
				p.fail("reading the checkout button: %v", err)
			}
			if !strings.Contains(disabled, "Last Lamp") {
				p.fail("Go to checkout is not disabled with a reason naming Last Lamp (reason %q)", disabled)
			}
		})
		t.Run("PlaceOrderIsDisabled", func(t *testing.T) {
			p := p.in(t)
			p.goTo("#/checkout")
			p.waitHeading("Checkout")
			p.waitTrue("a disabled Place order", `document.querySelector("main form button[type=submit]").disabled`, waitTimeout)
			if got := p.text("main form button[type=submit]"); cents(t, got) != plenty {
				p.fail("the button says %q, want the total of the line that can be bought", got)
			}
		})
	})

	t.Run("CheckoutErrorsAreTiedAndAnnounced", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("erin", "Erin Errors", false)
		p.buyFirstProduct(1)
		p.goTo("#/checkout")
		p.waitHeading("Checkout")
		p.click("main form button[type=submit]") // no address: the API refuses it
		p.waitTrue("the address fields flagged", `document.querySelector("#line1").getAttribute("aria-invalid") === "true"`, waitTimeout)
		for _, id := range []string{"line1", "city", "postalCode"} {
			t.Run(id, func(t *testing.T) {
				p := p.in(t)
				got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
					const c = document.getElementById(%s);
					if (c.getAttribute("aria-invalid") !== "true") return "not aria-invalid";
					const ids = (c.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
					const msg = ids.map(id => document.getElementById(id)).find(e => e && e.classList.contains("field-error"));
					if (!msg) return "no error message in aria-describedby";
					if (!msg.textContent.trim()) return "an empty error message";
					if (!msg.closest("[role=alert], [aria-live]")) return "an error message no live region announces";
					if (ids.some(id => !document.getElementById(id))) return "aria-describedby names a missing element";
					return "";
				})()`, js(id))))
				if err != nil {
					p.fail("reading #%s: %v", id, err)
				}
				if got != "" {
					p.fail("#%s: %s", id, got)
				}
			})
		}
		t.Run("ValidFieldsAreNotInvalid", func(t *testing.T) {
			p := p.in(t)
			if p.exists(`#country[aria-invalid], #name[aria-invalid], #line2[aria-invalid]`) {
				p.fail("a field without an error is marked aria-invalid")
			}
		})
		t.Run("Axe", func(t *testing.T) {
			p := p.in(t)
			violations, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](auditJS))
			if err != nil {
				p.fail("auditing the checkout: %v", err)
			}
			if len(violations) > 0 {
				p.fail("axe on the checkout with errors: %s", strings.Join(violations, "; "))
			}
		})
	})
}

// in is the page for a subtest: its failures end the subtest, not the
// test that opened the page.
func (p *page) in(t *testing.T) *page {
	q := *p
	q.t = t
	return &q
}
