package domain

import (
	"slices"
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

// SetQuantity puts quantity of p in the cart, copying the product's name
// and price into the line (model-denormalize-reads). A line already present
// keeps its position.
func (c *Cart) SetQuantity(p Product, quantity int, now time.Time) error {
	if quantity < MinQuantity || quantity > MaxQuantity {
		return &Error{Code: EINVALID, Message: "quantity must be between 1 and 99",
			Fields: []FieldError{{Pointer: "/quantity", Detail: "must be between 1 and 99"}}}
	}
	if p.Deleted {
		return Errorf(ENOTFOUND, "product %q not found", p.ID)
	}
	line := CartLine{
		ProductID:      p.ID,
		Name:           p.Name,
		UnitPriceCents: p.PriceCents,
		PriceVersion:   p.PriceVersion,
		ProductVersion: p.Version,
		Quantity:       quantity,
		Available:      true,
	}
	if i := c.lineIndex(p.ID); i >= 0 {
		c.Items[i] = line
	} else {
		if len(c.Items) >= MaxCartLines {
			return Errorf(ECONFLICT, "a cart holds at most %d lines", MaxCartLines)
		}
		c.Items = append(c.Items, line)
	}
	c.Recompute(now)
	return nil
}

// RemoveLine removes the product's line; it reports whether there was one.
func (c *Cart) RemoveLine(productID string, now time.Time) bool {
	i := c.lineIndex(productID)
	if i < 0 {
		return false
	}
	c.Items = slices.Delete(c.Items, i, i+1)
	c.Recompute(now)
	return true
}

// ApplyProduct refreshes the copies in the product's line from p, under the
// version guard: a line only ever takes a newer product version, so a
// change feed that delivers v3 and then, late, v2 leaves v3 (at least once
// delivery, no ordering across partitions). It reports whether the cart
// changed.
func (c *Cart) ApplyProduct(p Product, now time.Time) bool {
	i := c.lineIndex(p.ID)
	if i < 0 {
		return false
	}
	l := &c.Items[i]
	if p.Version <= l.ProductVersion {
		return false
	}
	l.Name = p.Name
	l.ProductVersion = p.Version
	l.Available = !p.Deleted
	if p.PriceVersion > l.PriceVersion {
		l.UnitPriceCents = p.PriceCents
		l.PriceVersion = p.PriceVersion
	}
	c.Recompute(now)
	return true
}

// Settle takes out of the cart what order o paid for, once the order is
// committed: each order line's quantity is subtracted from the cart line
// of that product (a line left at 0 or less goes), and the pending
// checkout marker is cleared. What the owner added or changed after the
// marker was written stays, and a price refreshed since does not matter:
// the guard is the marker, not the cart's _etag. Guarded by the marker
// (PendingOrderID == o.ID), so a replay or a second settler changes
// nothing; it reports whether the cart changed.
func (c *Cart) Settle(o Order, now time.Time) bool {
	if o.ID == "" || c.PendingOrderID != o.ID {
		return false
	}
	for _, ol := range o.Items {
		i := c.lineIndex(ol.ProductID)
		if i < 0 {
			continue
		}
		c.Items[i].Quantity -= ol.Quantity
		if c.Items[i].Quantity <= 0 {
			c.Items = slices.Delete(c.Items, i, i+1)
		}
	}
	c.PendingOrderID = ""
	c.Recompute(now)
	return true
}

// Recompute derives the totals and the flat productIds from the lines:
// itemCount is the sum of quantities, subtotalCents the sum of the
// available lines' totals.
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
		c.ProductIDs = append(c.ProductIDs, l.ProductID)
	}
	c.LastUpdated = now.UTC()
}

// Line returns the product's line, if any.
func (c *Cart) Line(productID string) (CartLine, bool) {
	if i := c.lineIndex(productID); i >= 0 {
		return c.Items[i], true
	}
	return CartLine{}, false
}

func (c *Cart) lineIndex(productID string) int {
	return slices.IndexFunc(c.Items, func(l CartLine) bool { return l.ProductID == productID })
}
