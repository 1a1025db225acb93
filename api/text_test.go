package api_test

import (
	"strings"
	"testing"
)

// hostileText is every class of rune a stored text field refuses, and the
// few that stay allowed, with whether a single-line and a multi-line field
// accept it.
var hostileText = []struct {
	name            string
	value           string
	line, multiline bool // accepted by a single-line / a multi-line field
}{
	{"Plain", "Tea & Coffee — naïve café 日本", true, true},
	{"NUL", "a\u0000b", false, false},
	{"Escape", "\u001b[2Jcleared", false, false},
	{"Bell", "a\u0007", false, false},
	{"Delete", "a\u007fb", false, false},
	{"C1", "a\u0085b", false, false},
	{"C1Last", "a\u009fb", false, false},
	{"RightToLeftOverride", "abc\u202etxt.exe", false, false},
	{"LeftToRightEmbedding", "a\u202ab", false, false},
	{"RightToLeftIsolate", "a\u2067b", false, false},
	{"PopDirectionalIsolate", "a\u2069b", false, false},
	{"InvalidUTF8", "a\xffb", false, false},
	{"LoneSurrogate", `a\ud800b`, false, false}, // raw JSON: decodes as U+FFFD
	{"Tab", "a\tb", false, true},
	{"Newline", "line one\nline two", false, true},
	{"CRLF", "line one\r\nline two", false, true},
	{"LeftToRightMark", "a\u200eb", true, true}, // a mark, not an override
}

// rawJSONString quotes v for a JSON body by hand, so that invalid UTF-8
// reaches the server as the bytes it is; a value holding a backslash is
// taken to be escaped already.
func rawJSONString(v string) string {
	if strings.Contains(v, `\`) {
		return `"` + v + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(v) {
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// textField is one stored free-text field of a request body: the body
// with the field's value replaced by a placeholder.
type textField struct {
	name, method, path, body, contentType, pointer string
	multiline, required                            bool
}

const placeholder = `@@`

func textFields() []textField {
	addr := func(field string) string {
		a := map[string]string{"name": `"Ada"`, "line1": `"1 Analytical St"`, "line2": `"Flat 2"`, "city": `"London"`, "postalCode": `"N1 9GU"`}
		a[field] = placeholder
		return `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":` + a["name"] + `,"line1":` + a["line1"] + `,"line2":` + a["line2"] +
			`,"city":` + a["city"] + `,"postalCode":` + a["postalCode"] + `,"country":"GB"}}`
	}
	return []textField{
		{"ReviewTitle", "POST", "/v1/products/book-1/reviews", `{"rating":5,"title":@@}`, "", "/title", false, true},
		{"ReviewBody", "POST", "/v1/products/book-1/reviews", `{"rating":5,"title":"Good","body":@@}`, "", "/body", true, false},
		{"ProductName", "POST", "/v1/products", `{"name":@@,"priceCents":100,"categoryId":"books"}`, "", "/name", false, true},
		{"ProductDescription", "POST", "/v1/products", `{"name":"Tea","description":@@,"priceCents":100,"categoryId":"books"}`, "", "/description", true, false},
		{"ProductImageURL", "POST", "/v1/products", `{"name":"Tea","imageUrl":@@,"priceCents":100,"categoryId":"books"}`, "", "/imageUrl", false, false},
		{"PatchName", "PATCH", "/v1/products/book-1", `{"name":@@}`, "application/merge-patch+json", "/name", false, true},
		{"PatchDescription", "PATCH", "/v1/products/book-1", `{"description":@@}`, "application/merge-patch+json", "/description", true, false},
		{"PatchImageURL", "PATCH", "/v1/products/book-1", `{"imageUrl":@@}`, "application/merge-patch+json", "/imageUrl", false, false},
		{"CategoryName", "PUT", "/v1/categories/books", `{"name":@@}`, "", "/name", false, true},
		{"AddressName", "POST", "/v1/checkout", addr("name"), "", "/shippingAddress/name", false, true},
		{"AddressLine1", "POST", "/v1/checkout", addr("line1"), "", "/shippingAddress/line1", false, true},
		{"AddressLine2", "POST", "/v1/checkout", addr("line2"), "", "/shippingAddress/line2", false, false},
		{"AddressCity", "POST", "/v1/checkout", addr("city"), "", "/shippingAddress/city", false, true},
		{"AddressPostalCode", "POST", "/v1/checkout", addr("postalCode"), "", "/shippingAddress/postalCode", false, true},
		{"WebhookURL", "POST", "/v1/admin/webhooks", `{"url":@@,"eventTypes":["order.placed"]}`, "", "/url", false, true},
		{"WebhookDescription", "POST", "/v1/admin/webhooks", `{"url":"https://r.example.com/","eventTypes":["order.placed"],"description":@@}`, "", "/description", true, false},
		// The dev token's name becomes the customer name of every order.
		{"DevTokenName", "POST", "/v1/dev/token", `{"userId":"alice","name":@@}`, "", "/name", false, false},
	}
}

// TestHostileTextIsRefused: every stored free-text field refuses control
// characters, bidi overrides and isolates and invalid UTF-8 (multi-line
// fields allow TAB, LF and CR), and a required one refuses a blank value;
// the 400 names the field.
func TestHostileTextIsRefused(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	blank := []struct{ name, value string }{{"Spaces", "   "}, {"Tabs", "\t\t"}, {"NoBreakSpace", "\u00a0\u3000"}}
	for _, f := range textFields() {
		t.Run(f.name, func(t *testing.T) {
			for _, tc := range hostileText {
				accepted := tc.line
				if f.multiline {
					accepted = tc.multiline
				}
				if accepted {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					s.on(t).wantFieldError(f, rawJSONString(tc.value), admin)
				})
			}
			if !f.required {
				return
			}
			for _, b := range blank {
				t.Run(b.name, func(t *testing.T) {
					s.on(t).wantFieldError(f, rawJSONString(b.value), admin)
				})
			}
		})
	}
}

// on is s reporting to t, for a subtest.
func (s *shop) on(t testing.TB) *shop {
	c := *s
	c.t = t
	return &c
}

// wantFieldError sends f's body with value and wants a 400 naming f.
func (s *shop) wantFieldError(f textField, value, admin string) {
	s.t.Helper()
	h := map[string]string{"Idempotency-Key": "k-text"}
	if f.contentType != "" {
		h["Content-Type"] = f.contentType
	}
	r := s.do(req{method: f.method, path: f.path, token: admin, body: strings.Replace(f.body, placeholder, value, 1), header: h}).want(400)
	p := decodeBody[problemBody](s.t, r)
	for _, e := range p.Errors {
		if e.Pointer == f.pointer && e.Detail != "" {
			return
		}
	}
	s.t.Errorf("errors = %+v, want one at %s; detail %q", p.Errors, f.pointer, p.Detail)
}

// TestTextAllowedStaysAccepted: what a field allows is stored as sent.
func TestTextAllowedStaysAccepted(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	for _, tc := range hostileText {
		if tc.multiline {
			body := `{"description":` + rawJSONString(tc.value) + `}`
			s.do(req{method: "PATCH", path: "/v1/products/book-1", token: admin, body: body,
				header: map[string]string{"Content-Type": "application/merge-patch+json"}}).want(200)
		}
		if tc.line {
			s.do(req{method: "PUT", path: "/v1/categories/books", token: admin, body: `{"name":` + rawJSONString(tc.value) + `}`}).want(200)
		}
	}
}
