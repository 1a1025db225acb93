package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ProductChange is an admin's change to a product (JSON merge patch
// fields); nil means "leave as is".
type ProductChange struct {
	Name        *string
	Description *string
	PriceCents  *int64
	CategoryID  *string
	// CategoryName goes with CategoryID: the copy from the categories index.
	CategoryName *string
	ImageURL     *string
	Tags         *[]string
	// Variants replace the product's variants as a whole (a merge patch
	// replaces an array); an empty list returns the product to one
	// implicit variant at PriceCents.
	Variants *[]Variant
}

// Check refuses a change p cannot take: a price for a product whose
// prices are its variants' (the change sets none of its own).
func (ch ProductChange) Check(p Product) error {
	variants := len(p.Variants) > 0
	if ch.Variants != nil {
		if err := ValidateVariants(*ch.Variants); err != nil {
			return err
		}
		variants = len(*ch.Variants) > 0
	}
	if ch.PriceCents != nil && variants {
		return &Error{Code: EINVALID, Message: "a product with variants is priced by its variants",
			Fields: []FieldError{{Pointer: "/priceCents", Detail: "set the price of each variant instead"}}}
	}
	return nil
}

// Apply changes the product (ch passed Check). A price change, of the
// product or of any variant, increments priceVersion (the version guard
// of every cart line copy); a category change records
// previousCategoryId so the view can remove the copy in the old partition.
// A drawn picture follows the name and category (KeepImage). Every change
// increments Version. It reports whether anything changed.
func (p *Product) Apply(ch ProductChange, now time.Time) bool {
	before := CartCopyOf(*p)
	changed := false
	setString := func(dst *string, v *string) {
		if v != nil && *v != *dst {
			*dst = *v
			changed = true
		}
	}
	setString(&p.Name, ch.Name)
	setString(&p.Description, ch.Description)
	setString(&p.ImageURL, ch.ImageURL)
	if ch.Tags != nil && !slices.Equal(*ch.Tags, p.Tags) {
		p.Tags = slices.Clone(*ch.Tags)
		changed = true
	}
	if ch.Variants != nil && !slices.EqualFunc(*ch.Variants, p.Variants, sameVariant) {
		prices := variantPrices(p.Variants)
		p.SetVariants(*ch.Variants)
		if variantPrices(p.Variants) != prices {
			p.PriceVersion++
		}
		changed = true
	}
	if ch.PriceCents != nil && *ch.PriceCents != p.PriceCents {
		p.PriceCents = *ch.PriceCents
		p.PriceVersion++
		changed = true
	}
	if ch.CategoryID != nil && *ch.CategoryID != p.CategoryID {
		p.PreviousCategoryID = p.CategoryID
		p.CategoryID = *ch.CategoryID
		changed = true
	}
	setString(&p.CategoryName, ch.CategoryName)
	if p.KeepImage() {
		changed = true
	}
	if changed {
		p.Version++
		p.NoteCopy(before)
		p.LastUpdated = now.UTC()
	}
	return changed
}

// NoteCopy moves CopyVersion when what a cart line copies of p is no
// longer before (a copy taken before the change). Every writer of a copied
// field calls it with the copy it started from.
func (p *Product) NoteCopy(before CartCopy) {
	if CartCopyOf(*p) != before {
		p.CopyVersion++
	}
}

// SoftDelete marks the product deleted with a ttl: deletes do not appear on
// the change feed (latest-version mode), so the feed workers must see a
// deleted=true version to remove the copies; TTL then removes the document.
func (p *Product) SoftDelete(ttlSeconds int, now time.Time) {
	defer p.NoteCopy(CartCopyOf(*p))
	p.Deleted = true
	p.TTL = &ttlSeconds
	p.Version++
	p.LastUpdated = now.UTC()
}

// sameVariant reports whether an admin's variant a says what b does
// (the availability copy is not the admin's).
func sameVariant(a, b Variant) bool {
	return a.SKU == b.SKU && a.PriceCents == b.PriceCents && a.ImageURL == b.ImageURL && maps.Equal(a.Attributes, b.Attributes)
}

// variantPrices names every variant's price, so a change of any one
// moves priceVersion.
func variantPrices(vs []Variant) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%s:%d;", v.SKU, v.PriceCents)
	}
	return b.String()
}

// SummaryOfProduct is the product's copy in productsByCategory.
func SummaryOfProduct(p Product) ProductSummary {
	return ProductSummary{
		Meta:          Meta{ID: p.ID, Type: TypeProductSummary, SchemaVersion: SchemaVersion},
		CategoryID:    p.CategoryID,
		CategoryName:  p.CategoryName,
		Name:          p.Name,
		PriceCents:    p.PriceCents,
		PriceMaxCents: priceMaxOver(p),
		Currency:      p.Currency,
		ImageURL:      p.ImageURL,
		AverageRating: p.ReviewStats.Average,
		ReviewCount:   p.ReviewStats.Count,
		RatingScore:   RatingScore(p.ReviewStats),
		StockStatus:   p.Availability.Status,
		Attributes:    p.Facets(),
		SourceVersion: p.Version,
	}
}

// priceMaxOver is p's highest price when above its lowest, else 0 (one
// price: the copies carry no range).
func priceMaxOver(p Product) int64 {
	if hi := p.PriceMax(); hi > p.PriceCents {
		return hi
	}
	return 0
}
