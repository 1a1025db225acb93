package embedded

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// filter is one compiled query condition: the wanted value both decoded
// and as canonical JSON, so most comparisons are a byte comparison.
type filter struct {
	path  string
	op    string
	want  any    // as JSON decoding yields it (numbers float64)
	raw   []byte // canonical JSON, as this store writes values
	class byte
}

func compileFilter(f store.Filter) (filter, error) {
	if err := checkProperty("filter", f.Path); err != nil {
		return filter{}, err
	}
	if f.Op != store.OpEqual && f.Op != store.OpArrayContains {
		return filter{}, domain.Errorf(domain.EINVALID, "filter on %s: unknown operator %q", f.Path, f.Op)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as encodeDoc writes documents
	if err := enc.Encode(f.Value); err != nil {
		return filter{}, domain.Errorf(domain.EINVALID, "filter on %s: value: %v", f.Path, err)
	}
	out := filter{path: f.Path, op: f.Op, raw: bytes.TrimSpace(buf.Bytes())}
	_ = json.Unmarshal(out.raw, &out.want)
	out.class = classOf(out.raw)
	return out, nil
}

// classOf names the JSON type of a raw value by its first byte.
func classOf(raw []byte) byte {
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; c {
	case '"', '{', '[':
		return c
	case 't', 'f', 'n':
		return 'l' // true, false, null: one spelling each
	}
	return '0'
}

// matches applies the filter to a property's raw value.
func (f *filter) matches(raw []byte) bool {
	if f.op == store.OpEqual {
		return f.equal(raw)
	}
	found := false
	arrayElements(raw, func(elem []byte) bool {
		found = f.equal(elem)
		return !found
	})
	return found
}

// equal compares as Cosmos SQL does, by value: 3 equals 3.0, and a string
// equals itself however it is escaped.
func (f *filter) equal(raw []byte) bool {
	if bytes.Equal(raw, f.raw) {
		return true
	}
	c := classOf(raw)
	switch {
	case c != f.class, c == 'l':
		return false
	case c == '"' && bytes.IndexByte(raw, '\\') < 0 && bytes.IndexByte(f.raw, '\\') < 0:
		return false
	}
	var got any
	if json.Unmarshal(raw, &got) != nil {
		return false
	}
	return reflect.DeepEqual(got, f.want)
}
