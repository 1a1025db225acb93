package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The helpers the browser flows share: one tab on the shop, waits with
// deadlines on what the page shows, and a screenshot on failure.

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
	// The box starts as the signed-in user's role: click it only to change it.
	checked, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector("#admin").checked`))
	if err != nil {
		p.fail("reading the administrator box: %v", err)
	}
	if checked != admin {
		p.click("#admin")
	}
	p.click("main form button[type=submit]")
	p.waitText("#status", "Signed in as "+name)
	// The header shows the name decoded from the token's claims.
	p.waitText("header .user", name)
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
