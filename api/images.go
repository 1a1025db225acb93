package api

import (
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// handleProductImage draws a product's picture (GET
// /v1/products/{id}/image.svg?v=...): one point read of the product, then
// an SVG drawn from its category and name alone, so the same product
// always gets the same picture. The URL carries the version of what it is
// drawn from (domain.ImageVersion): when v is the current one, the answer
// may be cached for a year and never revalidated (immutable), so a
// browser or a CDN in front of the shop reads the product for its picture
// once per version. Any other v gets the current picture, not cached.
func handleProductImage(products *repo.Products) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		v := queryOf(r).Get("v")
		if utf8.RuneCountInString(v) > maxImageVersion {
			writeProblem(w, r, domain.Errorf(domain.EINVALID, "v: at most %d characters (the image's version, as the product's imageUrl gives it)", maxImageVersion))
			return
		}
		p, err := products.Get(r.Context(), id)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "image/svg+xml")
		h.Set("X-Content-Type-Options", "nosniff")
		// An SVG opened on its own is a document: it may run nothing.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		if v == domain.ImageVersion(p.CategoryID, p.Name) {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(drawProduct(p.CategoryID, p.Name))
	}
}

// maxImageVersion bounds the v parameter of a product's image, as
// openapi.yaml does: a version is 10 hex digits; the bound leaves room.
const maxImageVersion = 64

// drawProduct is the picture of a product: the category sets the colours
// (every product of a category shares them, as a shop's photos share a
// backdrop), the name the pattern and the initials on the label.
func drawProduct(categoryID, name string) []byte {
	hue := int(sum64(categoryID) % 24 * 15)
	seed := sum64(name)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 400" width="400" height="400" role="img" aria-label="%s">`, html.EscapeString(name))
	fmt.Fprintf(&b, `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">`+
		`<stop offset="0" stop-color="hsl(%d 70%% 92%%)"/><stop offset="1" stop-color="hsl(%d 55%% 78%%)"/></linearGradient></defs>`, hue, (hue+25)%360)
	b.WriteString(`<rect width="400" height="400" fill="url(#g)"/>`)
	// The category also picks the pattern's shape, so two categories of
	// similar colours still look apart.
	shape := sum64(categoryID+"\x00shape") % 3
	for i := range 6 {
		x, y := 20+int(seed>>(i*10)%360), 20+int(seed>>(i*10+5)%360)
		r := 24 + int(seed>>(i*7)%60)
		fill := fmt.Sprintf(`fill="hsl(%d 60%% %d%%)" fill-opacity="0.35"`, (hue+i*25)%360, 50+i*5)
		switch shape {
		case 0:
			fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%d" %s/>`, x, y, r, fill)
		case 1:
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="%d" transform="rotate(%d %d %d)" %s/>`,
				x-r, y-r, 2*r, 2*r, r/4, int(seed>>(i*3)%90), x, y, fill)
		default:
			fmt.Fprintf(&b, `<path d="M%d %dl%d %dh%dz" %s/>`, x, y-r, r, 2*r, -2*r, fill)
		}
	}
	fmt.Fprintf(&b, `<rect x="110" y="130" width="180" height="140" rx="24" fill="#fff" fill-opacity="0.88"/>`+
		`<text x="200" y="222" text-anchor="middle" font-family="Georgia, 'DejaVu Serif', serif" font-size="72" font-weight="700" fill="hsl(%d 55%% 28%%)">%s</text>`,
		hue, html.EscapeString(initials(name)))
	b.WriteString(`</svg>`)
	return []byte(b.String())
}

// initials are the first letters of the name's first two words that start
// with a letter or digit: "Wireless Speaker Black" → "WS".
func initials(name string) string {
	var out []rune
	for _, word := range strings.Fields(name) {
		r := []rune(word)[0]
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, unicode.ToUpper(r))
		}
		if len(out) == 2 {
			break
		}
	}
	return string(out)
}

func sum64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
