package api_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/reference-shop/shop/api/client"
)

// client is the generated Go client of the API, signed in with tok (none
// when empty), whose calls the handler serves in process: each request and
// response is checked against openapi.yaml as s.do checks its own.
func (s *shop) client(tok string) *client.ClientWithResponses {
	s.t.Helper()
	opts := []client.ClientOption{client.WithHTTPClient(handlerDoer{s})}
	if tok != "" {
		opts = append(opts, client.WithRequestEditorFn(client.Bearer(tok)))
	}
	c, err := client.NewClientWithResponses("http://localhost:8080", opts...)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// handlerDoer serves the client's requests with the shop's handler.
type handlerDoer struct{ s *shop }

func (d handlerDoer) Do(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
	}
	hr := httptest.NewRequestWithContext(r.Context(), r.Method, r.URL.RequestURI(), bytes.NewReader(body))
	hr.Header = r.Header.Clone()
	rec := httptest.NewRecorder()
	d.s.handler.ServeHTTP(rec, hr)
	checkSpec(d.s.t, r.Method, r.URL.RequestURI(), hr.Header, body, rec)
	return rec.Result(), nil
}

// clientAddress is address as the client's type.
var clientAddress = client.Address{Name: "Ada Lovelace", Line1: "1 Analytical St", City: "London", PostalCode: "N1 9GU", Country: "GB"}
