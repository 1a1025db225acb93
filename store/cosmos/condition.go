package cosmos

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// renderCondition writes a patch's Condition as the SQL filter predicate
// Cosmos takes for a conditional partial document update:
//
//	FROM c WHERE c.available >= 3 AND c.sku = 'a'
//
// Unlike a query, a patch condition has no parameters (the SDK's
// PatchOperations.SetCondition takes one string), so the values are
// written into the text. That is safe only because nothing else can
// reach it: the condition passes store.Condition.Check first (top-level
// identifiers, the six operators, numbers or valid UTF-8 strings), names
// go through property (reserved words as c["value"]), numbers are written
// by strconv (Check made them json.Number in plain decimal form), and
// strings are quoted and escaped by sqlString. Anything else is EINVALID.
func renderCondition(cond store.Condition) (string, error) {
	cond, err := cond.Check()
	if err != nil {
		return "", err
	}
	if len(cond) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("FROM c WHERE ")
	for i, c := range cond {
		p, err := property(c.Path)
		if err != nil {
			return "", domain.Errorf(domain.EINVALID, "condition %d: %q is not a property name", i, c.Path)
		}
		if i > 0 {
			b.WriteString(" AND ")
		}
		var v string
		switch x := c.Value.(type) {
		case json.Number:
			v = string(x)
		case string:
			v = sqlString(x)
		default:
			// Check returns only these two; refuse rather than guess.
			return "", domain.Errorf(domain.EINVALID, "condition %d: a %T value cannot be written", i, c.Value)
		}
		fmt.Fprintf(&b, "%s %s %s", p, c.Op, v)
	}
	return b.String(), nil
}

// sqlString quotes s as a Cosmos SQL string literal: single quotes, with
// the backslash, both quotes, the control characters and the JSON line
// separators escaped, so the literal ends only where it should. s is
// valid UTF-8 (Check refuses anything else).
func sqlString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// setCondition puts the rendered predicate on the patch. azcosmos v1.5.0
// writes the condition into the request body between double quotes
// WITHOUT escaping it (PatchOperations.MarshalJSON uses %s), so the text
// handed over is the predicate already escaped as the inside of a JSON
// string: the service decodes it back to exactly sql. A test marshals the
// patch and checks that round trip, so an SDK that starts escaping shows.
func setCondition(p *azcosmos.PatchOperations, sql string) {
	if sql == "" {
		return
	}
	quoted, _ := json.Marshal(sql) // a string always marshals
	p.SetCondition(string(quoted[1 : len(quoted)-1]))
}
