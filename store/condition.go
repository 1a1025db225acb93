package store

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reference-shop/shop/domain"
)

// Comparison operators of a Condition: Cosmos SQL's. OpEqual ("=") is
// the one Filter uses too.
const (
	OpNotEqual       = "!="
	OpLess           = "<"
	OpLessOrEqual    = "<="
	OpGreater        = ">"
	OpGreaterOrEqual = ">="
)

// Comparison is one term of a Condition: the top-level property Path of
// the stored item compared with Value by Op. Value is a number (any Go
// integer or finite float, or a json.Number) or a string; nothing else.
type Comparison struct {
	Path  string
	Op    string
	Value any
}

// Condition is the filter predicate of a conditional patch, the AND of its
// comparisons, evaluated on the item as stored before the patch. It is
// what Cosmos takes as a partial document update's "condition"
// (FROM c WHERE c.available >= 3), so it has Cosmos SQL's meaning: a
// comparison with a missing property, or with a value of another type (a
// number against a string), is undefined and the predicate does not hold.
// Numbers compare as numbers, strings by code point. Empty means no
// condition.
type Condition []Comparison

// conditionPath is what a property of a condition may be named: a
// top-level identifier, as Cosmos renders it into SQL text (a patch
// condition takes no parameters, see store/cosmos).
var conditionPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// Check validates c the same way on both adapters and returns a copy in
// which every number is a json.Number in plain decimal form, as strconv
// writes it (so an adapter can compare it, or write it into SQL text,
// without looking at Go types again). An invalid condition is EINVALID.
func (c Condition) Check() (Condition, error) {
	if len(c) == 0 {
		return nil, nil
	}
	out := make(Condition, len(c))
	for i, cmp := range c {
		if !conditionPath.MatchString(cmp.Path) {
			return nil, domain.Errorf(domain.EINVALID, "condition %d: %q is not a top-level property name", i, cmp.Path)
		}
		switch cmp.Op {
		case OpEqual, OpNotEqual, OpLess, OpLessOrEqual, OpGreater, OpGreaterOrEqual:
		default:
			return nil, domain.Errorf(domain.EINVALID, "condition %d: unknown operator %q", i, cmp.Op)
		}
		v, err := conditionValue(cmp.Value)
		if err != nil {
			return nil, domain.Errorf(domain.EINVALID, "condition %d (%s): %s", i, cmp.Path, err)
		}
		cmp.Value = v
		out[i] = cmp
	}
	return out, nil
}

// conditionValue normalizes a comparison's value: a string as it is (valid
// UTF-8 only), a number as a json.Number.
func conditionValue(v any) (any, error) {
	switch n := v.(type) {
	case string:
		if !utf8.ValidString(n) {
			return nil, fmt.Errorf("the string is not valid UTF-8")
		}
		return n, nil
	case int:
		return intNumber(int64(n)), nil
	case int8:
		return intNumber(int64(n)), nil
	case int16:
		return intNumber(int64(n)), nil
	case int32:
		return intNumber(int64(n)), nil
	case int64:
		return intNumber(n), nil
	case uint:
		return json.Number(strconv.FormatUint(uint64(n), 10)), nil
	case uint8:
		return intNumber(int64(n)), nil
	case uint16:
		return intNumber(int64(n)), nil
	case uint32:
		return intNumber(int64(n)), nil
	case uint64:
		return json.Number(strconv.FormatUint(n, 10)), nil
	case float32:
		return floatNumber(float64(n))
	case float64:
		return floatNumber(n)
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return intNumber(i), nil
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", string(n))
		}
		return floatNumber(f)
	}
	return nil, fmt.Errorf("the value must be a number or a string, not %T", v)
}

func intNumber(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

func floatNumber(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%v is not a finite number", f)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return intNumber(int64(f)), nil
	}
	return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
}

// String writes c for error messages: available >= 3 AND sku = "a".
func (c Condition) String() string {
	parts := make([]string, len(c))
	for i, cmp := range c {
		v := fmt.Sprint(cmp.Value)
		if s, ok := cmp.Value.(string); ok {
			v = strconv.Quote(s)
		}
		parts[i] = cmp.Path + " " + cmp.Op + " " + v
	}
	return strings.Join(parts, " AND ")
}
