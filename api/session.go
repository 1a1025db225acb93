package api

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// sessionHeader carries a client's session between the shop and the
// client: on a response, the token the client should send on its next
// request; on a request, the token of its last response. With it a client
// reads its own writes on any instance of the shop, not only on the one
// that wrote (see store.Session, and "Session consistency" in
// docs/cosmos.md), and a cached screen older than its last write is not
// served to it (cached.go).
//
// A header and not a cookie: the API is cookie-free (Bearer tokens), a
// header is sent only by a client that means to, on its requests to the
// API and nowhere else, across origins as the CORS allow-list says, and
// the same way by the browser frontend (web/api.js keeps it per tab) and by
// any other client.
const sessionHeader = "X-Session-Token"

// A session token, as the API hands it out, is sealed: "s1." and the
// unpadded base64url of AES-256-GCM (a random nonce first) over
//
//	8 bytes  the client's last write through the API, Unix milliseconds,
//	         big-endian (0: none it carries)
//	the rest the store's session token (store.Session: on Cosmos, the
//	         containers' per-range session tokens), "" for none
//
// with the header's name as additional data. The key is derived (HKDF-
// SHA256) from the instance's Bearer secret, which every instance of one
// shop shares, so any instance opens what another sealed. Sealed, because
// the store's token is for the shop alone: it shows each partition key
// range's LSN, how much the shop writes, and a client that could edit it
// could ask for a replica that never comes (a 404/1002 for every read it
// sends). A token the shop did not seal, or sealed and then edited or cut,
// does not open: a 400, before any store call.
const sealPrefix = "s1."

// sessionClockSkew is how far apart the clocks of two instances may be:
// a cached screen filled less than this after the client's last write is
// not served to it (cached.go). NTP keeps hosts within milliseconds; a
// second also covers a badly synced one, and a screen not served from the
// cache costs one store read, nothing else.
const sessionClockSkew = time.Second

// maxSealedBytes bounds a sealed token: a store token of
// store.MaxSessionTokenBytes, sealed.
var maxSealedBytes = len(sealPrefix) + base64.RawURLEncoding.EncodedLen(12+8+store.MaxSessionTokenBytes+16)

// sealedSession is what a sealed token holds.
type sealedSession struct {
	store string    // the store's session token; "" for none
	wrote time.Time // the client's last write through the API; zero for none
}

// sessionSeal seals and opens session tokens with one key.
type sessionSeal struct{ aead cipher.AEAD }

func newSessionSeal(secret []byte) sessionSeal {
	key, err := hkdf.Key(sha256.New, secret, nil, "shop X-Session-Token v1", 32)
	if err != nil {
		panic(err) // only for a key length HKDF-SHA256 cannot make
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // a 32-byte key is always an AES-256 key
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		panic(err)
	}
	return sessionSeal{aead}
}

func (s sessionSeal) seal(v sealedSession) string {
	plain := make([]byte, 8, 8+len(v.store))
	if !v.wrote.IsZero() {
		binary.BigEndian.PutUint64(plain, uint64(v.wrote.UnixMilli()))
	}
	plain = append(plain, v.store...)
	return sealPrefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nil, nil, plain, []byte(sessionHeader)))
}

// errNotSealed is the answer to every token that does not open: which
// check it failed is of no use to the client, and none to a forger.
var errNotSealed = errors.New("not a token this shop issued (edited, cut or made up): send the last one a response gave, or none")

func (s sessionSeal) open(token string) (sealedSession, error) {
	if len(token) > maxSealedBytes {
		return sealedSession{}, fmt.Errorf("the token is %d bytes; one this shop issues is at most %d", len(token), maxSealedBytes)
	}
	body, ok := strings.CutPrefix(token, sealPrefix)
	if !ok {
		return sealedSession{}, errNotSealed
	}
	sealed, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return sealedSession{}, errNotSealed
	}
	plain, err := s.aead.Open(nil, nil, sealed, []byte(sessionHeader))
	if err != nil || len(plain) < 8 {
		return sealedSession{}, errNotSealed
	}
	v := sealedSession{store: string(plain[8:])}
	if ms := binary.BigEndian.Uint64(plain); ms != 0 {
		v.wrote = time.UnixMilli(int64(ms))
	}
	return v, nil
}

// sessions is how the API carries a client's session (withSession).
type sessions struct {
	seal sessionSeal
	// store says the store issues session tokens (Deps.SessionTokens):
	// each request then carries a store.Session.
	store bool
	// stamp says a write is stamped with its time (a read cache serves
	// screens, Deps.Cache): the client's token then says when it last
	// wrote, and the cache serves it nothing older.
	stamp bool
	now   func() time.Time
}

// withSession opens the client's session token into the request's
// context, and writes the one to keep on the response. A token the shop
// did not seal, or sent twice, is a 400 before any store call, on every
// store, so a client learns of a broken token anywhere (refuseSession). The header is on
// a response only when there is something new to keep: the store issued
// a token during the request, or the request wrote and writes are
// stamped. With neither (the strongly consistent embedded store, no read
// cache) the request carries no session at all, which spares every
// request a context and a writer.
func withSession(c sessions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent := r.Header.Values(sessionHeader)
			if len(sent) > 1 {
				refuseSession(w, r, "send it once, as the last response gave it")
				return
			}
			var in sealedSession
			if len(sent) == 1 && sent[0] != "" {
				var err error
				if in, err = c.seal.open(sent[0]); err != nil {
					refuseSession(w, r, err.Error())
					return
				}
			}
			if !c.store && !c.stamp {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			if !in.wrote.IsZero() {
				ctx = context.WithValue(ctx, wroteKey{}, in.wrote)
			}
			var s *store.Session
			if c.store {
				ctx, s = store.WithSession(ctx, in.store)
			}
			writes := c.stamp && !safeMethod(r.Method)
			next.ServeHTTP(beforeHeader(w, func(h http.Header) {
				out := in
				token, issued := s.Issued()
				if issued {
					out.store = token
				}
				if writes {
					out.wrote, issued = c.now(), true
				}
				switch {
				case !issued:
				case out.store == "" && out.wrote.IsZero():
					// The store found the client's token unusable, and
					// there is nothing else to keep: drop it.
					h[sessionHeader] = []string{""}
				default:
					h[sessionHeader] = []string{c.seal.seal(out)}
				}
			}), r.WithContext(ctx))
		})
	}
}

// refuseSession answers a request whose token does not open with a 400,
// and an empty X-Session-Token, which tells a client to drop the token it
// holds: one that keeps tokens as the header's contract says (web/api.js)
// then recovers on its next request, after a shop's secret changed too.
func refuseSession(w http.ResponseWriter, r *http.Request, why string) {
	w.Header()[sessionHeader] = []string{""}
	writeProblem(w, r, domain.Errorf(domain.EINVALID, "%s: %s", sessionHeader, why))
}

// safeMethod reports whether a request of method only reads.
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

type wroteKey struct{}

// clientWrote returns when the request's client last wrote through the
// API, as its session token says (zero when it does not say).
func clientWrote(ctx context.Context) time.Time {
	t, _ := ctx.Value(wroteKey{}).(time.Time)
	return t
}
