package store

import (
	"context"
	"sync"

	"github.com/reference-shop/shop/domain"
)

// A session token is what lets a client read its own writes on a store
// that is not strongly consistent. Cosmos, at its default Session
// consistency, answers every request with one; a read that sends it back is
// served by a replica at least that far along, any other read may be served
// by one that has not yet seen the client's write. The adapter keeps the
// tokens of every response for the process (store/cosmos/sessions.go), so
// one instance reads its own writes; a client that talks to several
// instances carries its own token from one request to the next, and Session
// is how it crosses the port: the API puts the client's token in the
// request's context (WithSession), the adapter sends it to the store with
// its own and hands back, through the same Session, the token the client
// should send next. The value is the adapter's and opaque to everything
// else. The embedded store is strongly consistent: it issues no token and
// never touches a Session, so on it the client gets none.

// MaxSessionTokenBytes bounds a session token, the client's and the one an
// adapter issues: it travels in one HTTP header.
const MaxSessionTokenBytes = 4096

// CheckSessionToken refuses, as EINVALID, a session token no adapter can
// have issued: over MaxSessionTokenBytes, or with a character other than
// A-Z a-z 0-9 . _ - : # = , / (the alphabet every adapter keeps to). ""
// means none and is fine. A well-formed token the adapter cannot read is
// not refused here: the adapter ignores what it cannot read, which costs
// the client the guarantee of reading its writes, never a correct answer.
func CheckSessionToken(token string) error {
	if len(token) > MaxSessionTokenBytes {
		return domain.Errorf(domain.EINVALID, "the session token is %d bytes; at most %d are allowed", len(token), MaxSessionTokenBytes)
	}
	for i := 0; i < len(token); i++ {
		if !sessionTokenByte(token[i]) {
			return domain.Errorf(domain.EINVALID, "the session token holds %q at byte %d: only A-Z a-z 0-9 . _ - : # = , / are allowed", token[i], i)
		}
	}
	return nil
}

func sessionTokenByte(c byte) bool {
	switch {
	case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '.', '_', '-', ':', '#', '=', ',', '/':
		return true
	}
	return false
}

// Session is one client's session token during one unit of work (an HTTP
// request). Safe for concurrent use: a handler may call the store from
// several goroutines.
type Session struct {
	mu     sync.Mutex
	token  string
	issued bool
}

type sessionKey struct{}

// WithSession returns a context carrying a Session that starts from the
// client's token ("" for none). Check the token first (CheckSessionToken).
func WithSession(ctx context.Context, token string) (context.Context, *Session) {
	s := &Session{token: token}
	return context.WithValue(ctx, sessionKey{}, s), s
}

// SessionFrom returns the context's Session, or nil.
func SessionFrom(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// Token returns the current token: the client's, merged with whatever the
// store has issued since. A nil Session has none.
func (s *Session) Token() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// Update replaces the token with f of it, atomically, and marks the token
// issued by the store. Adapters call it as responses come back; f must
// return a token CheckSessionToken accepts.
func (s *Session) Update(f func(token string) string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = f(s.token)
	s.issued = true
}

// Issued returns the token to hand back to the client, and false when the
// store issued none during the unit of work (the embedded store never
// does; nor does a request that reached no store). An issued "" tells the
// client to drop the token it holds: the adapter found it unusable.
func (s *Session) Issued() (string, bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.issued
}
