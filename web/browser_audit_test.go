package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// auditJS checks the page against the accessibility rules a screen of the
// shop can break, and returns the violations as sentences: every image
// has an alt, every form control and every link or button a name, ids
// are unique, the page has a language and one h1, headings skip no
// level, nothing focusable hides under aria-hidden, and text has the
// contrast WCAG 2.2 AA asks (4.5:1, 3:1 from 24 px or 18.66 px bold) on
// the colour behind it. Disabled controls and text over a picture or a
// gradient are out of its reach.
const auditJS = `(() => {
  const out = [];
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const name = (el) => {
    if (el.getAttribute("aria-label")) return el.getAttribute("aria-label").trim();
    const by = el.getAttribute("aria-labelledby");
    if (by) return by.split(" ").map((id) => document.getElementById(id)?.textContent || "").join(" ").trim();
    if (el.id && document.querySelector("label[for=" + CSS.escape(el.id) + "]")) return "label";
    if (el.closest("label")) return "label";
    return (el.textContent || "").trim() || (el.querySelector("img[alt]")?.alt || "").trim();
  };
  const where = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "");
  if (!document.documentElement.lang) out.push("the page has no lang");
  for (const img of document.querySelectorAll("img")) if (!img.hasAttribute("alt")) out.push("image without alt: " + img.src);
  for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) if (!name(el)) out.push("form control without a label: " + where(el));
  for (const el of document.querySelectorAll("a[href], button")) if (visible(el) && !el.closest("[aria-hidden=true]") && !name(el)) out.push("link or button without a name: " + where(el));
  const ids = {};
  for (const el of document.querySelectorAll("[id]")) { if (ids[el.id]) out.push("duplicate id " + el.id); ids[el.id] = true; }
  const h1s = document.querySelectorAll("main h1");
  if (h1s.length !== 1) out.push(h1s.length + " h1 in main, want 1");
  let level = 0;
  for (const hd of document.querySelectorAll("main h1, main h2, main h3, main h4")) {
    const l = Number(hd.tagName[1]);
    if (level && l > level + 1) out.push("heading " + hd.tagName + " " + JSON.stringify(hd.textContent) + " skips a level");
    level = l;
  }
  for (const el of document.querySelectorAll("[aria-hidden=true] a[href]:not([tabindex='-1']), [aria-hidden=true] button, [aria-hidden=true] input"))
    out.push("focusable element inside aria-hidden: " + where(el));
  const rgb = (c) => { const m = c.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const st = getComputedStyle(e);
      if (st.backgroundImage !== "none") return null;
      const c = rgb(st.backgroundColor);
      if (c.a === 1) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || seen.has(el) || !visible(el) || el.closest("[aria-hidden=true], .visually-hidden, noscript, :disabled")) continue;
    seen.add(el);
    const st = getComputedStyle(el);
    const bg = behind(el);
    if (!bg) continue;
    let fg = rgb(st.color);
    const alpha = fg.a * Number(st.opacity);
    fg = { r: fg.r * alpha + bg.r * (1 - alpha), g: fg.g * alpha + bg.g * (1 - alpha), b: fg.b * alpha + bg.b * (1 - alpha) };
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
    const want = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < want) out.push("contrast " + ratio.toFixed(2) + ":1 < " + want + ":1 for " + JSON.stringify(n.textContent.trim().slice(0, 40)) + " in " + where(el));
  }
  return out;
})()`

// TestBrowserAudit: every screen of the shop passes the audit at 1280 and
// at 360 px wide; at 360 px the header's links and the cost bar each fit
// on one line and nothing scrolls sideways; the admin's feed panel shows
// leases as words, not JSON.
func TestBrowserAudit(t *testing.T) {
	base, browser := startBrowser(t)

	// One order, so that every screen has something to show.
	setup := openPage(t, browser, base)
	setup.signIn("auditor", "Audrey Auditor", true)
	setup.buyFirstProduct(2)
	// A product sold in sizes, one of them in the order: its picker, its
	// line's size and the category's size filters are audited too.
	setup.apiStatus("create a product with sizes", "POST", "/v1/products", `{"productId": "audit-tee", "name": "Audit Tee",
	  "categoryId": "coffee-tea", "variants": [
	    {"sku": "at-s", "attributes": {"size": "S"}, "priceCents": 1799, "stock": 5},
	    {"sku": "at-m", "attributes": {"size": "M"}, "priceCents": 1999, "stock": 5},
	    {"sku": "at-l", "attributes": {"size": "L"}, "priceCents": 2499, "stock": 0}]}`, 201)
	setup.goTo("#/p/audit-tee")
	setup.waitHeading("Audit Tee")
	setup.click(`[data-attribute=size] input[value="S"]`)
	setup.click("form.buy button[type=submit]")
	setup.waitText("#status", "In your cart: 1 × Audit Tee (Size S)")
	// One refused for a declined card first, for the rejected order's page.
	setup.startCheckout("pm_card_chargeDeclined")
	setup.waitText("#status", "Payment declined")
	rejectedID := setup.newestOrder("rejected")
	setup.checkout()
	orderID := setup.hashID()
	setup.waitText("table.order-lines [data-testid=attributes]", "Size S")
	productID := "p-0001"
	setup.reloadUntil("#/c/coffee-tea?size=S", "the size filters", `document.querySelector(".filters a.current") !== null`)

	screens := []struct{ hash, heading string }{
		{"#/", homeHeading},
		{"#/c/coffee-tea", "Coffee & Tea"},
		{"#/p/" + productID, ""},
		{"#/p/audit-tee", "Audit Tee"},
		{"#/c/coffee-tea?size=S", "Coffee & Tea"},
		{"#/p/" + productID + "/reviews", "Reviews"},
		{"#/cart", "Your cart"},
		{"#/checkout", "Checkout"},
		{"#/orders", "Your orders"},
		{"#/orders/" + orderID, "Order details"},
		{"#/orders/" + rejectedID, "Order details"},
		{"#/account", "Your account"},
		{"#/admin", "Admin"},
		{"#/signin", "Sign in"},
		{"#/search?q=coffee", "Results for"},
		{"#/search?q=zeppelin", "Results for"},
		{"#/search?q=red+blue+green+pink+gray+teal", "Search for"},
		{"#/search", "Search"},
	}
	for _, width := range []int64{1280, 360} {
		t.Run(fmt.Sprintf("Width%d", width), func(t *testing.T) {
			p := openPage(t, browser, base)
			p.do("set the width", chromedp.EmulateViewport(width, 900))
			t.Cleanup(func() { _ = chromedp.Do(browser, chromedp.EmulateReset()) })
			for _, s := range screens {
				p.goTo(s.hash)
				p.waitTrue("the screen "+s.hash, fmt.Sprintf(
					`!document.querySelector("main[aria-busy]") && (document.querySelector("main h1")?.textContent || "").startsWith(%s) && location.hash === %s`,
					js(s.heading), js(s.hash)), waitTimeout)
				violations, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](auditJS))
				if err != nil {
					p.fail("auditing %s: %v", s.hash, err)
				}
				for _, v := range violations {
					t.Errorf("%s at %d px: %s", s.hash, width, v)
				}
				if width == 360 {
					p.assertOneLine(s.hash, "header nav ul")
					p.assertOneLine(s.hash, "#cost")
					wide, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
					if err != nil || wide {
						t.Errorf("%s at 360 px scrolls sideways (%v)", s.hash, err)
					}
				}
			}
		})
	}

	t.Run("FeedPanelInWords", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.goTo("#/admin")
		p.waitHeading("Admin")
		p.click("#feeds-h ~ button")
		p.waitText("table.leases caption", "Leases")
		cells, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("#feeds-h ~ div td, #feeds-h ~ div dd")].map(c => c.textContent)`))
		if err != nil {
			p.fail("reading the feed panel: %v", err)
		}
		if len(cells) == 0 {
			p.fail("the feed panel shows no leases")
		}
		for _, c := range cells {
			if strings.HasPrefix(c, "[") || strings.HasPrefix(c, "{") {
				p.fail("the feed panel shows raw JSON: %q", c)
			}
		}
	})
}

// newestOrder returns the id of the signed-in user's newest order, read
// through the API, and fails unless its status is status.
func (p *page) newestOrder(status string) string {
	p.t.Helper()
	got, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](
		`fetch("/v1/orders?limit=1", {headers: {"Authorization": "Bearer " + localStorage.getItem("shop.token")}})
		  .then(r => r.json()).then(d => [d.items[0].id, d.items[0].status])`, chromedp.EvalAwaitPromise))
	if err != nil || len(got) != 2 || got[1] != status {
		p.fail("the newest order is %q (%v), want one %s", got, err, status)
	}
	return got[0]
}

// assertOneLine fails the test when the element matching sel is taller
// than one line of its text.
func (p *page) assertOneLine(screen, sel string) {
	p.t.Helper()
	lines, err := chromedp.Run(p.ctx, chromedp.Evaluate[float64](fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		const st = getComputedStyle(el);
		const line = parseFloat(st.lineHeight) || parseFloat(st.fontSize) * 1.5;
		const inner = el.getBoundingClientRect().height - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
		return inner / line;
	})()`, js(sel))))
	if err != nil {
		p.fail("measuring %s: %v", sel, err)
	}
	if lines > 1.6 {
		p.t.Errorf("%s at 360 px: %s takes %.1f lines, want 1", screen, sel, lines)
	}
}
