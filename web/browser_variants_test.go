package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserVariants: a product sold in sizes, through the storefront.
// The product page's picker shows each size's price and availability,
// with the sold-out size disabled; the price follows the size chosen,
// and "Add to cart" adds that size, whose cart line says it and changes
// its quantity and leaves the cart as a line of its own (?sku=). The
// category page prices the product "from" its lowest size and filters
// by a size; the search results price it "from" too; the admin's
// variants form shows the variants.
func TestBrowserVariants(t *testing.T) {
	base, browser := startBrowser(t)
	const id, name = "tee-variants", "Variant Tee"
	setup := openPage(t, browser, base)
	setup.signIn("vera", "Vera Admin", true)
	category := setup.firstCategory()
	// Three sizes: two can be bought, so the page opens on none of them
	// and the shopper's choice moves the price.
	setup.apiStatus("create the product with variants", "POST", "/v1/products", fmt.Sprintf(`{"productId": %s, "name": %s, "categoryId": %s,
	  "variants": [
	    {"sku": "tee-s", "attributes": {"size": "S"}, "priceCents": 1799, "stock": 5},
	    {"sku": "tee-m", "attributes": {"size": "M"}, "priceCents": 1999, "stock": 3},
	    {"sku": "tee-l", "attributes": {"size": "L"}, "priceCents": 2499, "stock": 0}]}`,
		js(id), js(name), js(category)), 201)

	option := func(size string) string {
		return fmt.Sprintf(`[data-testid=variant-picker] [data-attribute=size] input[value=%s]`, js(size))
	}
	priceIs := func(p *page, sel string, cents int) {
		p.t.Helper()
		p.waitTrue(fmt.Sprintf("%s showing %d cents", sel, cents), fmt.Sprintf(
			`(document.querySelector(%s)?.textContent || "").replace(/\D/g, "") === %s`, js(sel), js(fmt.Sprint(cents))), waitTimeout)
	}

	t.Run("PickAddChangeRemove", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.goTo("#/p/" + id)
		p.waitHeading(name)
		p.assertOneRead(`^GET /v1/products/tee-variants$`)
		if got := p.text("[data-testid=price]"); !strings.HasPrefix(got, "From") {
			p.fail("before a size is chosen the price says %q, want from the lowest", got)
		}
		priceIs(p, "[data-testid=price]", 1799)

		// The sold-out size is disabled, and says so with its price.
		p.waitTrue("L disabled", fmt.Sprintf(`document.querySelector(%s).disabled`, js(option("L"))), waitTimeout)
		p.waitText(`[data-attribute=size] label.sold-out`, "Sold out")
		if got := p.text(`[data-attribute=size] label.sold-out`); cents(t, got) != 2499 {
			p.fail("the sold-out size says %q, want its price 24.99 and Sold out", got)
		}

		// Adding before choosing a size asks for one and adds nothing.
		p.click("form.buy button[type=submit]")
		p.waitText("#status", "Choose a size first")

		p.click(option("M"))
		priceIs(p, "[data-testid=price]", 1999)
		p.click(option("S"))
		priceIs(p, "[data-testid=price]", 1799)
		p.click(option("M"))
		priceIs(p, "[data-testid=price]", 1999)
		p.waitTrue("the address naming the size", `location.hash.endsWith("?sku=tee-m")`, waitTimeout)

		p.fill("#qty", "2")
		p.click("form.buy button[type=submit]")
		p.waitText("#status", "In your cart: 2 × Variant Tee (Size M)")

		p.goTo("#/cart")
		p.waitHeading("Your cart")
		line := `.line[data-sku="tee-m"]`
		p.waitText(line+" [data-testid=attributes]", "Size M")
		priceIs(p, line+" [data-testid=unit-price]", 1999)

		p.fill(line+" .line-qty input", "3")
		p.click(line + " .line-qty button[type=submit]")
		p.waitText("#status", "Quantity of Variant Tee (Size M) is now 3")
		priceIs(p, line+" .line-total", 3*1999)
		if got := p.text("[data-testid=item-count]"); got != "3" {
			p.fail("the cart holds %q items, want 3", got)
		}

		// The line's link opens the product on its size.
		p.click(line + " .line-name a")
		p.waitHeading(name)
		p.waitTrue("M chosen", fmt.Sprintf(`document.querySelector(%s).checked`, js(option("M"))), waitTimeout)
		priceIs(p, "[data-testid=price]", 1999)

		p.goTo("#/cart")
		p.waitHeading("Your cart")
		p.click(line + " button.danger")
		p.waitText("#status", "Removed Variant Tee (Size M).")
		p.waitTrue("the line gone", fmt.Sprintf(`document.querySelector(%s) === null`, js(line)), waitTimeout)
	})

	t.Run("CategoryFromPriceAndSizeFilter", func(t *testing.T) {
		p := openPage(t, browser, base)
		// The catalog feed copies the product onto the category page with
		// its price range and sizes.
		card := fmt.Sprintf(`.products li[data-product=%s]`, js(id))
		p.reloadUntil("#/c/"+category, "the tee on the category page with its sizes",
			fmt.Sprintf(`document.querySelector(%s) !== null && document.querySelector('.filters a[data-filter="size=M"]') !== null`, js(card)))
		if got := p.text(card + " .price"); !strings.HasPrefix(got, "From") || cents(t, got) != 1799 {
			p.fail("the category card's price says %q, want from 17.99", got)
		}

		p.click(`.filters a[data-filter="size=M"]`)
		p.waitTrue("the page filtered by size M", `location.hash.includes("size=M") && !document.querySelector("main[aria-busy]") &&
		  [...document.querySelectorAll(".products li[data-product]")].map((e) => e.dataset.product).join() === "tee-variants"`, waitTimeout)
		p.assertOneRead(`^GET /v1/categories/[^/]+/products$`)
		if got := p.text(`.filters a.current[data-filter="size=M"]`); got == "" {
			p.fail("the size M filter is not shown as in force")
		}

		// A size no product comes in: an empty page that says so.
		p.goTo("#/c/" + category + "?size=XXL")
		p.waitText("[data-testid=no-products]", "No products in Size XXL")
		p.click("[data-testid=clear-filters]")
		p.waitTrue("the whole department again", fmt.Sprintf(`!location.hash.includes("size") && document.querySelectorAll(".products li[data-product]").length > 1 && document.querySelector(%s) !== null`, js(card)), waitTimeout)
	})

	t.Run("SearchFromPrice", func(t *testing.T) {
		p := openPage(t, browser, base)
		result := fmt.Sprintf(`.products li[data-product=%s] .price`, js(id))
		p.reloadUntil("#/search?q=variant+tee", "the tee in the search results",
			fmt.Sprintf(`(document.querySelector(%s)?.textContent || "").startsWith("From")`, js(result)))
		if got := cents(t, p.text(result)); got != 1799 {
			p.fail("the search result's price is %d cents, want from 1799", got)
		}
	})

	t.Run("AdminVariantsForm", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.goTo("#/admin?product=" + id)
		p.waitHeading("Admin")
		p.waitText("[data-testid=admin-variants]", "is sold in 3 variants")
		p.waitText("[data-testid=admin-product]", "is priced by its variants")
		got, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](
			`JSON.parse(document.querySelector("#variantsJson").value).map((v) => v.sku + "=" + v.priceCents)`))
		if err != nil {
			p.fail("reading the variants' JSON: %v", err)
		}
		if fmt.Sprint(got) != "[tee-s=1799 tee-m=1999 tee-l=2499]" {
			p.fail("the variants form holds %v", got)
		}
		// A new price for L through the form reaches the product page.
		p.fill("#variantsJson", `[{"sku":"tee-s","attributes":{"size":"S"},"priceCents":1799},`+
			`{"sku":"tee-m","attributes":{"size":"M"},"priceCents":1999},`+
			`{"sku":"tee-l","attributes":{"size":"L"},"priceCents":2599}]`)
		p.click("#saveVariants")
		p.waitText("[data-testid=admin-variants]", "is now sold in 3 variants")
		p.goTo("#/p/" + id)
		p.waitHeading(name)
		if got := cents(t, p.text(`[data-attribute=size] label.sold-out`)); got != 2599 {
			p.fail("after the change L costs %d cents, want 2599", got)
		}
	})
}
