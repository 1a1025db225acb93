package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// sampleTags are the tag words of the sample catalog
// (migrations/sample/gen.go): a search for one matches by tag, which the
// result cards do not show.
var sampleTags = []string{"gift", "bestseller", "new", "eco", "handmade", "organic", "limited", "classic"}

// TestBrowserSearch: the header's search box (issues 19 and 21) as a
// shopper uses it: a word typed and submitted with Enter, two words that
// must both match, a word nothing matches, a query the API refuses,
// "More results" past the first page, and a link to a search opened cold.
func TestBrowserSearch(t *testing.T) {
	base, browser := startBrowser(t)

	t.Run("TypeAWordAndPressEnter", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.waitHeading(homeHeading)
		p.do("type a word and press Enter", chromedp.SendKeys(chromedp.CSS("#search-q"), "coffee"+kb.Enter))
		p.waitHeading("Results for “coffee”")
		p.assertOneRead(`^GET /v1/search$`)
		if got, want := p.hash(), "#/search?q=coffee"; got != want {
			p.fail("the search went to %q, want %q", got, want)
		}
		// Every product whose name or department holds the word, and no
		// other: the catalog read in full through the category pages.
		want := p.evalStrings(`(async () => {
			const cats = (await (await fetch("/v1/categories")).json()).items;
			const ids = [];
			for (const c of cats) {
				const page = await (await fetch("/v1/categories/" + c.id + "/products?limit=100")).json();
				for (const p of page.items) if (/\bcoffees?\b/i.test(p.name + " " + p.categoryName)) ids.push(p.id);
			}
			return ids;
		})()`)
		if len(want) == 0 {
			p.fail("the sample catalog has no coffee: the test needs some")
		}
		if got := p.resultIDs(); !sameSet(got, want) {
			p.fail("the results are %v, want the products named or filed under coffee %v", got, want)
		}
	})

	t.Run("ResultCardsShowTheRatingAResultCarries", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.search("coffee")
		p.waitHeading("Results for “coffee”")
		// Each card's rating line against the product's stats: a search
		// result carries the average in half stars and no review count;
		// the category page's card keeps both.
		ratingLines := `(async (cards) => {
			const out = [];
			for (const card of cards) {
				const s = (await (await fetch("/v1/products/" + card.dataset.product)).json()).reviewStats;
				out.push(JSON.stringify({id: card.dataset.product, count: s.count, average: s.average,
					line: card.querySelector(".rating").textContent,
					full: (card.querySelector(".stars")?.textContent.match(/★/g) || []).length,
					half: card.querySelectorAll(".stars .half-star").length}));
			}
			return out;
		})`
		check := func(where string, lines []string, want func(count int, average float64) string) {
			rated := 0
			for _, l := range lines {
				var c struct {
					ID         string
					Count      int
					Average    float64
					Line       string
					Full, Half int
				}
				if err := json.Unmarshal([]byte(l), &c); err != nil {
					p.fail("%s: %v", where, err)
				}
				if c.Count > 0 {
					rated++
				}
				if w := want(c.Count, c.Average); !strings.HasSuffix(c.Line, w) || (c.Count > 0) != strings.Contains(c.Line, "out of 5") {
					p.fail("%s: the card of %s (%d reviews, %.2f) says %q, want it to end in %q", where, c.ID, c.Count, c.Average, c.Line, w)
				}
				// The same stars on both screens: the average in half stars
				// (a half star's glyphs hold one filled star).
				if halves := int(math.Round(c.Average * 2)); c.Count > 0 && (c.Full != (halves+1)/2 || c.Half != halves%2) {
					p.fail("%s: the card of %s (%.2f) draws %d filled stars, %d of them half, want %.1f stars", where, c.ID, c.Average, c.Full, c.Half, float64(halves)/2)
				}
			}
			if rated == 0 {
				p.fail("%s: no card of a rated product: the test needs some", where)
			}
		}
		check("search", p.evalStrings(ratingLines+`(document.querySelectorAll(".products .card[data-product]"))`), func(n int, avg float64) string {
			if n == 0 {
				return "No reviews yet"
			}
			return fmt.Sprintf(" %.1f", math.Round(avg*2)/2)
		})
		p.goTo("#/c/coffee-tea")
		p.waitHeading("Coffee & Tea")
		check("category page", p.evalStrings(ratingLines+`(document.querySelectorAll(".products .card[data-product]"))`), func(n int, avg float64) string {
			if n == 0 {
				return "No reviews yet"
			}
			return fmt.Sprintf(" (%d)", n) // after the average to one decimal
		})
	})

	t.Run("EveryWordMustMatch", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.search("coffee")
		p.waitHeading("Results for “coffee”")
		coffee := p.resultIDs()
		// A second word from the best result's name, not a tag word, so
		// that only names can match it.
		word := p.evalString(fmt.Sprintf(`document.querySelector(".products a.card-title").textContent
			.split(/[^\p{L}]+/u).map(w => w.toLowerCase()).find(w => w.length > 3 && w !== "coffee" && !%s.includes(w)) || ""`,
			jsList(sampleTags)))
		if word == "" {
			p.fail("the best coffee result has no second word to search for")
		}
		first := coffee[0]

		p.search("coffee " + word)
		p.waitHeading("Results for “coffee " + word + "”")
		p.assertOneRead(`^GET /v1/search$`)
		both := p.resultIDs()
		if len(both) >= len(coffee) {
			p.fail("%q finds %d products, as many as %q: the test needs a word that narrows", "coffee "+word, len(both), "coffee")
		}
		if !slices.Contains(both, first) {
			p.fail("%q does not find %s, whose name holds both words", "coffee "+word, first)
		}
		for _, id := range both {
			if !slices.Contains(coffee, id) {
				p.fail("%q finds %s, which %q does not: the words are not ANDed", "coffee "+word, id, "coffee")
			}
		}
		stem := strings.TrimSuffix(word, "s")
		for _, name := range p.evalStrings(`[...document.querySelectorAll(".products a.card-title")].map(a => a.textContent)`) {
			if !strings.Contains(strings.ToLower(name), stem) {
				p.fail("%q finds %q, whose name lacks %q", "coffee "+word, name, word)
			}
		}
	})

	t.Run("NoResults", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.search("zeppelin")
		p.waitHeading("Results for “zeppelin”")
		p.assertOneRead(`^GET /v1/search$`)
		p.waitText("[data-testid=no-results]", "No products match “zeppelin”.")
		if p.exists(".products .card") {
			p.fail("the empty state shows product cards")
		}
	})

	t.Run("TooManyWordsInWords", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.search("red blue green pink gray teal")
		p.waitHeading("Search for “red blue green pink gray teal”")
		p.waitText("[data-testid=search-problem]", "Please search with at most 5 words")
		if main := p.text("main"); strings.Contains(main, "q must") {
			p.fail("the page shows the API's raw words: %q", main)
		}
		p.waitText(".cost-label", "GET /v1/search (400)")
	})

	t.Run("MoreResults", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.signIn("pam", "Pam Pager", true)
		// More products than one page (24) holds, all found by one word.
		const n = 30
		created := p.evalString(fmt.Sprintf(`(async () => {
			const auth = {"Authorization": "Bearer " + localStorage.getItem("shop.token"), "Content-Type": "application/json"};
			for (let i = 1; i <= %d; i++) {
				const r = await fetch("/v1/products", {method: "POST", headers: auth, body: JSON.stringify(
					{name: "Quokka Lamp " + i, priceCents: 1000 + i, categoryId: "kitchen", stock: 10})});
				if (r.status !== 201) return "product " + i + ": HTTP " + r.status;
			}
			return "";
		})()`, n))
		if created != "" {
			p.fail("creating the products: %s", created)
		}
		// The products feed writes the index: wait until it holds them all.
		p.waitTrue("the index to hold the new products", fmt.Sprintf(
			`fetch("/v1/search?q=quokka&limit=100").then(r => r.json()).then(d => d.items.length === %d)`, n), feedTimeout)

		p.search("quokka")
		p.waitHeading("Results for “quokka”")
		p.assertOneRead(`^GET /v1/search$`)
		if got := len(p.resultIDs()); got != 24 {
			p.fail("the first page shows %d products, want 24", got)
		}
		p.click("main .more button")
		p.waitTrue("the second page", fmt.Sprintf(`document.querySelectorAll(".products .card").length === %d`, n), waitTimeout)
		ids := p.resultIDs()
		if got := len(slices.Compact(slices.Sorted(slices.Values(ids)))); got != n {
			p.fail("the two pages show %d distinct products, want %d", got, n)
		}
		if p.exists("main .more button") {
			p.fail("the last page still offers more results")
		}
		p.waitText(".cost-label", "GET /v1/search (2 pages)")
		if got := p.text("[data-testid=cost]"); !strings.HasPrefix(got, "2 store ops ·") {
			p.fail("two pages cost %q, want 2 store ops", got)
		}
	})

	t.Run("DeepLink", func(t *testing.T) {
		p := openPage(t, browser, base)
		p.do("open a link to a search", chromedp.Navigate(base+"/#/search?q=coffee+tea"))
		p.waitHeading("Results for “coffee tea”")
		p.assertOneRead(`^GET /v1/search$`)
		if got := p.value("#search-q"); got != "coffee tea" {
			p.fail("the search box shows %q, want the link's words", got)
		}
		if len(p.resultIDs()) == 0 {
			p.fail("the link to a search shows no products")
		}
		p.do("reload", chromedp.Reload())
		p.waitHeading("Results for “coffee tea”")
		p.assertOneRead(`^GET /v1/search$`)
		// Elsewhere the box is empty again.
		p.goTo("#/")
		p.waitHeading(homeHeading)
		if got := p.value("#search-q"); got != "" {
			p.fail("on the home page the search box shows %q, want it empty", got)
		}
	})
}

// search types words in the header's search box and clicks its button.
// It first waits for the app to have rendered a screen: before that the
// form has no handler (a submit would reload the page) and a render could
// still land on the box.
func (p *page) search(words string) {
	p.t.Helper()
	p.waitTrue("the app to render a screen",
		`document.querySelector("main h1") !== null && !document.querySelector("main[aria-busy]")`, waitTimeout)
	p.fill("#search-q", words)
	p.waitTrue("the words in the search box",
		fmt.Sprintf(`document.querySelector("#search-q").value === %s`, js(words)), waitTimeout)
	p.click("#search button[type=submit]")
}

// resultIDs are the product ids of the result cards, in their order.
func (p *page) resultIDs() []string {
	p.t.Helper()
	return p.evalStrings(`[...document.querySelectorAll(".products .card[data-product]")].map(c => c.dataset.product)`)
}

// hash is the page's location.hash.
func (p *page) hash() string {
	p.t.Helper()
	return p.evalString(`location.hash`)
}

// evalString evaluates expr (awaiting it if it is a promise).
func (p *page) evalString(expr string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("evaluating %.60s: %v", expr, err)
	}
	return s
}

// evalStrings evaluates expr to a list of strings (awaiting a promise).
func (p *page) evalStrings(expr string) []string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("evaluating %.60s: %v", expr, err)
	}
	return s
}

// jsList quotes words as a JavaScript array literal.
func jsList(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = js(w)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
