package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Bounded embeds, with the bound enforced (model-embed-related: an
// embedded array must not grow without limit toward the 2 MB item limit).
const (
	MaxCartLines = 50
	MinQuantity  = 1
	MaxQuantity  = 99
)

// NewCart returns the empty cart of userID; its id is the userId so the
// cart screen is a point read by (userId, userId).
func NewCart(userID string) Cart {
	return Cart{
		Meta:       Meta{ID: userID, Type: TypeCart, SchemaVersion: SchemaVersion},
		UserID:     userID,
		Items:      []CartLine{},
		ProductIDs: []string{},
	}
}

// SetQuantity puts quantity of the variant sku of p in the cart,
// copying the product's name and the variant's attributes and price into
// the line (model-denormalize-reads). A line already present keeps its
// position. A product with variants needs a SKU; one without takes none.
func (c *Cart) SetQuantity(p Product, sku string, quantity int, now time.Time) error {
	if quantity < MinQuantity || quantity > MaxQuantity {
		return &Error{Code: EINVALID, Message: "quantity must be between 1 and 99",
			Fields: []FieldError{{Pointer: "/quantity", Detail: "must be between 1 and 99"}}}
	}
	if p.Deleted {
		return Errorf(ENOTFOUND, "product %q not found", p.ID)
	}
	v, ok := p.VariantOf(sku)
	switch {
	case !ok && sku == "":
		return &Error{Code: EINVALID, Message: fmt.Sprintf("product %q is sold in variants: choose one (sku)", p.ID),
			Fields: []FieldError{{Pointer: "/sku", Detail: "required: one of " + strings.Join(p.SKUs(), ", ")}}}
	case !ok:
		return Errorf(ENOTFOUND, "product %q has no variant %q", p.ID, sku)
	}
	if i := c.lineIndex(p.ID, sku); i >= 0 {
		// The line may already hold a newer copy than p (the price
		// fan-out got there first): Refresh keeps the newer one.
		c.Items[i].Refresh(p)
		c.Items[i].Quantity = quantity
	} else {
		if len(c.Items) >= MaxCartLines {
			return Errorf(ECONFLICT, "a cart holds at most %d lines", MaxCartLines)
		}
		c.Items = append(c.Items, CartLine{
			ProductID:      p.ID,
			SKU:            sku,
			Attributes:     maps.Clone(v.Attributes),
			Name:           p.Name,
			UnitPriceCents: v.PriceCents,
			PriceVersion:   p.PriceVersion,
			ProductVersion: p.Version,
			Quantity:       quantity,
			Available:      true,
			StockStatus:    v.Availability.Status,
		})
	}
	c.Recompute(now)
	return nil
}

// AddQuantity adds quantity of p to its line (a new line when there is
// none): "Add to cart" pressed twice holds two. A line holds at most
// MaxQuantity; an add past it is a conflict that says what the cart holds.
func (c *Cart) AddQuantity(p Product, sku string, quantity int, now time.Time) error {
	if quantity < MinQuantity || quantity > MaxQuantity {
		return c.SetQuantity(p, sku, quantity, now)
	}
	held := 0
	if l, ok := c.Line(p.ID, sku); ok {
		held = l.Quantity
	}
	if held+quantity > MaxQuantity {
		return Errorf(ECONFLICT, "your cart already holds %d of %s, and a line holds at most %d", held, p.Name, MaxQuantity)
	}
	return c.SetQuantity(p, sku, held+quantity, now)
}

// RemoveLine removes the line of the variant sku of the product; it
// reports whether there was one.
func (c *Cart) RemoveLine(productID, sku string, now time.Time) bool {
	i := c.lineIndex(productID, sku)
	if i < 0 {
		return false
	}
	c.Items = slices.Delete(c.Items, i, i+1)
	c.Recompute(now)
	return true
}

// CartCopy is what a cart line copies from its product: the fields that a
// product change must carry to every open cart holding it.
type CartCopy struct {
	Name         string `json:"name"`
	PriceCents   int64  `json:"priceCents"`
	PriceVersion int64  `json:"priceVersion"`
	Available    bool   `json:"available"`
	StockStatus  string `json:"stockStatus,omitempty"`
	// Variants names what a line of each variant copies (SKU,
	// attributes, price, status), so a change to any variant is a change
	// of the copy; "" for a product without variants.
	Variants string `json:"variants,omitempty"`
}

// CartCopyOf is the copy a cart line of p should carry.
func CartCopyOf(p Product) CartCopy {
	var vs strings.Builder
	for _, v := range p.Variants {
		fmt.Fprintf(&vs, "%s%v%d%s;", v.SKU, v.Attributes, v.PriceCents, v.Availability.Status)
	}
	return CartCopy{Name: p.Name, PriceCents: p.PriceCents, PriceVersion: p.PriceVersion, Available: !p.Deleted, StockStatus: p.Availability.Status, Variants: vs.String()}
}

// lineCopy is what a line shows: compared before and after Refresh.
type lineCopy struct {
	CartCopy
	attributes string
}

func (l CartLine) copy() lineCopy {
	return lineCopy{CartCopy{Name: l.Name, PriceCents: l.UnitPriceCents, PriceVersion: l.PriceVersion, Available: l.Available, StockStatus: l.StockStatus}, fmt.Sprint(l.Attributes)}
}

// Refresh is the freshness rule of every cart line copy, whoever writes
// it (the cart PUT, the price fan-out): the line takes p's name and its
// variant's attributes and availability only from a newer product version
// than the one it copied (ProductVersion), and the variant's price only
// with a newer priceVersion. A line whose variant p no longer sells (a
// SKU removed, or a line of no SKU on a product that now has variants)
// becomes unavailable, as a deleted product's does. So a
// copy never goes backwards, whatever order the writes land in: at least
// once delivery and two writers racing can only bring it forward. It
// reports whether what the line shows changed; a product write that
// touched none of it (new review stats) changes nothing worth a write.
func (l *CartLine) Refresh(p Product) bool {
	if p.ID != l.ProductID || p.Version <= l.ProductVersion {
		return false
	}
	before := l.copy()
	v, sold := p.VariantOf(l.SKU)
	l.Name = p.Name
	l.Available = !p.Deleted && sold
	l.ProductVersion = p.Version
	if sold {
		l.StockStatus = v.Availability.Status
		if l.SKU != "" {
			l.Attributes = maps.Clone(v.Attributes)
		}
		if p.PriceVersion > l.PriceVersion {
			l.UnitPriceCents = v.PriceCents
			l.PriceVersion = p.PriceVersion
		}
	}
	return l.copy() != before
}

// ApplyProduct refreshes the product's lines, one per variant in the
// cart, from p (Refresh) and reports whether what the cart shows changed.
func (c *Cart) ApplyProduct(p Product, now time.Time) bool {
	changed := false
	for i := range c.Items {
		if c.Items[i].ProductID == p.ID && c.Items[i].Refresh(p) {
			changed = true
		}
	}
	if changed {
		c.Recompute(now)
	}
	return changed
}

// MarkPending writes the marker of a checkout whose order takes the id
// orderID.
func (c *Cart) MarkPending(orderID string, now time.Time) {
	c.Pending = &PendingCheckout{OrderID: orderID, Since: now.UTC()}
}

// PendingOrder returns the order id of the checkout in progress, if any.
func (c *Cart) PendingOrder() (string, bool) {
	if c.Pending == nil {
		return "", false
	}
	return c.Pending.OrderID, true
}

// IsPending reports whether the cart carries the marker of the checkout
// of orderID.
func (c *Cart) IsPending(orderID string) bool {
	id, ok := c.PendingOrder()
	return ok && id == orderID
}

// Unmark removes the marker of the checkout whose order is orderID, and
// reports whether it was there: a checkout whose batch was refused, or
// whose order was voided, leaves the cart as it was.
func (c *Cart) Unmark(orderID string) bool {
	if !c.IsPending(orderID) {
		return false
	}
	c.Pending = nil
	return true
}

// Settle takes out of the cart what order o paid for, once the order is
// committed: each order line's quantity is subtracted from the cart line
// of that product (a line left at 0 or less goes), and the marker is
// cleared. A price refreshed since by the fan-out does not matter.
// Guarded by the marker (it names o), so a replay or a second settler
// changes nothing; it reports whether the cart changed.
func (c *Cart) Settle(o Order, now time.Time) bool {
	if o.ID == "" || !c.Unmark(o.ID) {
		return false
	}
	for _, ol := range o.Items {
		i := c.lineIndex(ol.ProductID, ol.SKU)
		if i < 0 {
			continue
		}
		c.Items[i].Quantity -= ol.Quantity
		if c.Items[i].Quantity <= 0 {
			c.Items = slices.Delete(c.Items, i, i+1)
		}
	}
	c.Recompute(now)
	return true
}

// Recompute derives the totals and the flat productIds from the lines:
// itemCount is the sum of quantities, subtotalCents the sum of the
// available lines' totals; productIds names each product once, however
// many of its variants the cart holds.
func (c *Cart) Recompute(now time.Time) {
	c.ItemCount, c.SubtotalCents = 0, 0
	c.ProductIDs = make([]string, 0, len(c.Items))
	for i := range c.Items {
		l := &c.Items[i]
		l.LineTotalCents = l.UnitPriceCents * int64(l.Quantity)
		c.ItemCount += l.Quantity
		if l.Available {
			c.SubtotalCents += l.LineTotalCents
		}
		if !slices.Contains(c.ProductIDs, l.ProductID) {
			c.ProductIDs = append(c.ProductIDs, l.ProductID)
		}
	}
	c.LastUpdated = now.UTC()
}

// Line returns the line of the variant sku of the product, if any.
func (c *Cart) Line(productID, sku string) (CartLine, bool) {
	if i := c.lineIndex(productID, sku); i >= 0 {
		return c.Items[i], true
	}
	return CartLine{}, false
}

func (c *Cart) lineIndex(productID, sku string) int {
	return slices.IndexFunc(c.Items, func(l CartLine) bool { return l.ProductID == productID && l.SKU == sku })
}
