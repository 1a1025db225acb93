package embedded

import (
	"cmp"
	"encoding/json"
	"strconv"

	"github.com/reference-shop/shop/store"
)

// holds evaluates a checked condition (store.Condition.Check) on a decoded
// item, with Cosmos SQL's meaning: every comparison must be true, and a
// comparison with a missing property or a value of another type is
// undefined, which is not true (so != does not hold either).
func holds(doc map[string]any, cond store.Condition) bool {
	for _, c := range cond {
		got, ok := doc[c.Path]
		if !ok {
			return false
		}
		order, comparable := compareValues(got, c.Value)
		if !comparable {
			return false
		}
		if !orderHolds(c.Op, order) {
			return false
		}
	}
	return true
}

// orderHolds says whether op accepts a comparison that came out order.
func orderHolds(op string, order int) bool {
	switch op {
	case store.OpEqual:
		return order == 0
	case store.OpNotEqual:
		return order != 0
	case store.OpLess:
		return order < 0
	case store.OpLessOrEqual:
		return order <= 0
	case store.OpGreater:
		return order > 0
	case store.OpGreaterOrEqual:
		return order >= 0
	}
	return false
}

// compareValues orders a stored value (decoded with UseNumber) against a
// condition's value (a json.Number or a string). Two numbers compare as
// integers when both are int64, as floats otherwise; two strings by byte,
// which for UTF-8 is code point order. Any other pair is not comparable.
func compareValues(stored, want any) (int, bool) {
	switch w := want.(type) {
	case string:
		s, ok := stored.(string)
		if !ok {
			return 0, false
		}
		return cmp.Compare(s, w), true
	case json.Number:
		n, ok := stored.(json.Number)
		if !ok {
			return 0, false
		}
		x, errX := strconv.ParseInt(string(n), 10, 64)
		y, errY := strconv.ParseInt(string(w), 10, 64)
		if errX == nil && errY == nil {
			return cmp.Compare(x, y), true
		}
		f, errF := n.Float64()
		g, errG := w.Float64()
		if errF != nil || errG != nil {
			return 0, false
		}
		return cmp.Compare(f, g), true
	}
	return 0, false
}
