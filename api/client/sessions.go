package client

import (
	"context"
	"net/http"
	"sync"
)

// Sessions keeps a client's X-Session-Token: the session the shop hands
// back with a response, to send with the next request so that any instance
// reads what this client's earlier requests wrote. The token is opaque
// (the shop seals it): Sessions only holds and sends it.
//
// Every route takes the header, so it is no parameter of any call: give a
// client WithSessions, or use Editor and Doer apart. A Sessions is safe for
// concurrent use; with requests in flight together, the last response to
// arrive decides what is held. The zero value holds no token.
type Sessions struct {
	mu    sync.Mutex
	token string
}

// Token returns the token held, "" if none.
func (s *Sessions) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// Set holds token, e.g. one saved from an earlier run; "" drops it.
func (s *Sessions) Set(token string) {
	s.mu.Lock()
	s.token = token
	s.mu.Unlock()
}

// Keep holds what a response says of the session, as SessionTokenOf reads
// it: a token replaces the one held, an empty one drops it, and a response
// without the header leaves it.
func (s *Sessions) Keep(r *http.Response) {
	if token, ok := SessionTokenOf(r); ok {
		s.Set(token)
	}
}

// Editor sends the token held as X-Session-Token, and nothing while none
// is held. Pass it to a call, or to every call of a client with
// WithRequestEditorFn.
func (s *Sessions) Editor() RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		if token := s.Token(); token != "" {
			req.Header.Set("X-Session-Token", token)
		}
		return nil
	}
}

// Doer sends requests through d and keeps the session of every response
// (Keep), a problem's too: a refused write may still have written.
func (s *Sessions) Doer(d HttpRequestDoer) HttpRequestDoer {
	return doerFunc(func(req *http.Request) (*http.Response, error) {
		r, err := d.Do(req)
		if err == nil {
			s.Keep(r)
		}
		return r, err
	})
}

// WithSessions makes a client keep its session in s: every call sends the
// token held (Editor) and keeps the one its response brings (Doer). It
// wraps the HttpRequestDoer given so far, so it comes after any
// WithHTTPClient:
//
//	var s client.Sessions
//	c, err := client.NewClientWithResponses(url, client.WithHTTPClient(hc), client.WithSessions(&s))
func WithSessions(s *Sessions) ClientOption {
	return func(c *Client) error {
		if c.Client == nil {
			c.Client = &http.Client{}
		}
		c.Client = s.Doer(c.Client)
		c.RequestEditors = append(c.RequestEditors, s.Editor())
		return nil
	}
}

// doerFunc is a function as an HttpRequestDoer.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }
