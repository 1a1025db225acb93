package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Variants are the ways one product is sold: a T-shirt in sizes and
// colours, a coffee in 250 g and 1 kg. Each has its own SKU, attribute
// values, price, picture and stock, and they are embedded in the product
// as a bounded array (the attribute-array pattern): the product page
// stays ONE point read, and the attribute values are copied, flattened
// ("size=M"), onto the product's summary in productsByCategory, where an
// index on that array serves a category page filtered by an attribute in
// one single-partition query (ProductSummaries.Page).
//
// A product without variants is sold as one implicit variant, the
// product itself, named by the empty SKU: its stock is the document
// StockID, its cart lines name no SKU. Every rule below treats the two
// alike through the SKU.

// Bounds of the attribute array (model-embed-related: an embedded array
// must not grow without limit toward the 2 MB item limit). 50 variants of
// 4 attributes keep the product page's document under 20 KB.
const (
	MaxVariants          = 50
	MaxVariantAttributes = 4
	MaxSKUBytes          = 64
	MaxAttributeName     = 20
	MaxAttributeValue    = 40
)

// Variant is one SKU of a product.
type Variant struct {
	// SKU names the variant within its product ([A-Za-z0-9._-], at most
	// MaxSKUBytes): a cart line, an order line, a stock document and a
	// reservation name it beside the product id.
	SKU string `json:"sku"`
	// Attributes are the variant's values, by attribute name
	// ({"size":"M","colour":"navy"}). Every variant of a product has the
	// same names, and no two the same values.
	Attributes map[string]string `json:"attributes"`
	PriceCents int64             `json:"priceCents"`
	// ImageURL is the variant's own picture; empty shows the product's.
	ImageURL string `json:"imageUrl,omitempty"`
	// Availability is the copy of the variant's stock status, kept by
	// the inventory feed from the variant's stock document.
	Availability Availability `json:"availability"`
}

// VariantOf returns the variant of p named sku. The empty SKU names the
// implicit variant of a product without variants, and nothing on a
// product with them: a line must say which one it wants.
func (p *Product) VariantOf(sku string) (Variant, bool) {
	if sku == "" {
		if len(p.Variants) > 0 {
			return Variant{}, false
		}
		return Variant{PriceCents: p.PriceCents, ImageURL: p.ImageURL, Availability: p.Availability}, true
	}
	if i := p.variantIndex(sku); i >= 0 {
		return p.Variants[i], true
	}
	return Variant{}, false
}

func (p *Product) variantIndex(sku string) int {
	return slices.IndexFunc(p.Variants, func(v Variant) bool { return v.SKU == sku })
}

// SKUs are the SKUs whose stock p sells: its variants', or the empty SKU
// of its implicit one.
func (p *Product) SKUs() []string {
	if len(p.Variants) == 0 {
		return []string{""}
	}
	out := make([]string, len(p.Variants))
	for i, v := range p.Variants {
		out[i] = v.SKU
	}
	return out
}

// PriceMax is the highest price of p's variants, or its price.
func (p *Product) PriceMax() int64 {
	hi := p.PriceCents
	for _, v := range p.Variants {
		hi = max(hi, v.PriceCents)
	}
	return hi
}

// Facets are p's attribute values flattened to "name=value", sorted and
// without repeats: the attribute array a category page filters on
// (ProductSummary.Attributes). Nil for a product without variants.
func (p *Product) Facets() []string {
	var out []string
	for _, v := range p.Variants {
		for name, value := range v.Attributes {
			out = append(out, Facet(name, value))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Facet is the flattened form of one attribute value, as the category
// page's filter asks for it (?size=M is Facet("size", "M")).
func Facet(name, value string) string { return name + "=" + value }

// SetVariants replaces p's variants with vs (validated), keeping the
// availability copy of every SKU that stays: the stock of a SKU does not
// change with its product's description. A new SKU has no stock yet
// (sold out) until its stock document says otherwise. The product's
// price becomes the lowest of the variants' ("from $19.99"); its
// availability the best of theirs (variantStatus).
func (p *Product) SetVariants(vs []Variant) {
	if len(vs) == 0 {
		if len(p.Variants) > 0 {
			// Back to one implicit variant: its status is its own stock's
			// (writes.UpdateProduct reads it), not the variants' best;
			// sold out until that stock says otherwise, as a new SKU. Never
			// empty: an empty status marks a product whose stock is not
			// tracked, which sells without a limit.
			p.Availability = Availability{Status: SoldOut}
		}
		p.Variants = nil
		return
	}
	kept := make([]Variant, len(vs))
	for i, v := range vs {
		v.Attributes = maps.Clone(v.Attributes)
		v.Availability = Availability{Status: SoldOut}
		if j := p.variantIndex(v.SKU); j >= 0 {
			v.Availability = p.Variants[j].Availability
		}
		kept[i] = v
	}
	p.Variants = kept
	p.deriveFromVariants()
}

// deriveFromVariants keeps what the product shows of its variants: the
// lowest price, and the best availability.
func (p *Product) deriveFromVariants() {
	if len(p.Variants) == 0 {
		return
	}
	lo := p.Variants[0].PriceCents
	for _, v := range p.Variants[1:] {
		lo = min(lo, v.PriceCents)
	}
	if lo != p.PriceCents {
		p.PriceCents = lo
	}
	p.Availability.Status = variantStatus(p.Variants)
}

// variantStatus is the availability of a product with variants as the
// category page and search show it: in stock if any variant is, low if
// the best is low, sold out when every one is.
func variantStatus(vs []Variant) string {
	best := ""
	rank := map[string]int{"": 0, SoldOut: 1, LowInStock: 2, InStock: 3}
	for _, v := range vs {
		if rank[v.Availability.Status] > rank[best] {
			best = v.Availability.Status
		}
	}
	return best
}

// ValidateVariants checks an admin's variants: at most MaxVariants, each
// with a well-formed unique SKU, a price, 1..MaxVariantAttributes
// attributes of the same names as every other variant's, and values no
// other variant has. The errors name the field by JSON pointer under
// /variants.
func ValidateVariants(vs []Variant) error {
	var fields []FieldError
	bad := func(ptr, format string, args ...any) {
		fields = append(fields, FieldError{Pointer: ptr, Detail: fmt.Sprintf(format, args...)})
	}
	if len(vs) > MaxVariants {
		bad("/variants", "at most %d variants", MaxVariants)
	}
	skus := map[string]bool{}
	combos := map[string]bool{}
	var names []string
	for i, v := range vs {
		at := fmt.Sprintf("/variants/%d", i)
		switch {
		case !validSKU(v.SKU):
			bad(at+"/sku", "1 to %d of A-Z a-z 0-9 . _ -", MaxSKUBytes)
		case skus[v.SKU]:
			bad(at+"/sku", "SKU %q is repeated", v.SKU)
		}
		skus[v.SKU] = true
		if v.PriceCents < 1 || v.PriceCents > MaxPriceCents {
			bad(at+"/priceCents", "must be between 1 and %d", MaxPriceCents)
		}
		if len(v.Attributes) < 1 || len(v.Attributes) > MaxVariantAttributes {
			bad(at+"/attributes", "1 to %d attributes", MaxVariantAttributes)
			continue
		}
		these := slices.Sorted(maps.Keys(v.Attributes))
		for _, name := range these {
			switch {
			case !validAttributeName(name):
				bad(at+"/attributes", "attribute name %q: 1 to %d of a-z 0-9 _", name, MaxAttributeName)
			case slices.Contains(PageParameters, name):
				bad(at+"/attributes", "attribute name %q is a parameter of the category page (%s), so it could not filter it", name, strings.Join(PageParameters, ", "))
			}
			if value := v.Attributes[name]; !validAttributeValue(value) {
				bad(at+"/attributes/"+name, "1 to %d characters, no control or bidi character, no = or ,", MaxAttributeValue)
			}
		}
		if names == nil {
			names = these
		} else if !slices.Equal(names, these) {
			bad(at+"/attributes", "every variant has the attributes %s", strings.Join(names, ", "))
		}
		combo := fmt.Sprint(v.Attributes) // map printing is sorted by key
		if combos[combo] {
			bad(at+"/attributes", "another variant has the same values")
		}
		combos[combo] = true
	}
	if len(fields) > 0 {
		return &Error{Code: EINVALID, Message: fields[0].Pointer + ": " + fields[0].Detail, Fields: fields}
	}
	return nil
}

// MaxPriceCents bounds a price an admin can set.
const MaxPriceCents = 100_000_000

func validSKU(s string) bool {
	if s == "" || len(s) > MaxSKUBytes {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func validAttributeName(s string) bool {
	if s == "" || len(s) > MaxAttributeName {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func validAttributeValue(s string) bool {
	n := 0
	for _, r := range s {
		switch {
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == '=', r == ',', r == 0xfffd:
			return false
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			// A bidi override or isolate shows the value as another, as
			// every one-line text refuses it (api's "line" rule).
			return false
		}
		n++
	}
	return n >= 1 && n <= MaxAttributeValue && strings.TrimSpace(s) == s
}

// PageParameters are the category page's own query parameters: every
// other one is an attribute filter (?size=M), so no attribute may take
// one of these names, which it could never be filtered by.
var PageParameters = []string{"sort", "limit", "continuation"}

// ValidFacetQuery reports whether name and value can name a facet: the
// category page's filter refuses anything else before it queries.
func ValidFacetQuery(name, value string) bool {
	return validAttributeName(name) && validAttributeValue(value)
}

// ValidSKU reports whether s is a well-formed SKU (the cart's ?sku=).
func ValidSKU(s string) bool { return validSKU(s) }

// LineLabel names a line by its product and, for a variant, its SKU
// ("p-0147/M-navy"): how refusals name lines.
func LineLabel(productID, sku string) string {
	if sku == "" {
		return productID
	}
	return productID + "/" + sku
}
