package api

import (
	"net/http"

	"shop/domain"
	"shop/store"
)

// sessionHeader carries the store's session token between the shop and a
// client: on a response, the token the client should send on its next
// request; on a request, the token of its last response. With it a client
// reads its own writes on any instance of the shop, not only on the one
// that wrote (see store.Session, and "Session consistency" in
// docs/cosmos.md).
//
// A header and not a cookie: the API is cookie-free (Bearer tokens), a
// header is sent only by a client that means to, on its requests to the
// API and nowhere else, across origins as the CORS allow-list says, and
// the same way by the browser frontend (web/api.js keeps it per tab) and by
// any other client.
const sessionHeader = "X-Session-Token"

// withSession reads the client's session token into the request's
// store.Session, and writes the one the store issued on the response.
// A token the shop cannot have issued (over store.MaxSessionTokenBytes,
// a character outside its alphabet, or the header sent twice) is a 400
// before any store call, on every store, so a client learns of a broken
// token anywhere; a token of the right shape that the store cannot read
// is ignored by the store (see store.CheckSessionToken). The header is on
// a response only when the store issued a token during the request. With
// keep false (a store that issues none, such as the strongly consistent
// embedded store) the request carries no store.Session at all, which
// spares every request a context and a writer.
func withSession(keep bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent := r.Header.Values(sessionHeader)
			if len(sent) > 1 {
				writeProblem(w, r, domain.Errorf(domain.EINVALID, "%s: send it once, as the last response gave it", sessionHeader))
				return
			}
			token := ""
			if len(sent) == 1 {
				token = sent[0]
			}
			if err := store.CheckSessionToken(token); err != nil {
				writeProblem(w, r, domain.Errorf(domain.EINVALID, "%s: %s", sessionHeader, domain.ErrorMessage(err)))
				return
			}
			if !keep {
				next.ServeHTTP(w, r)
				return
			}
			ctx, s := store.WithSession(r.Context(), token)
			next.ServeHTTP(beforeHeader(w, func(h http.Header) {
				if token, ok := s.Issued(); ok {
					// "" too: the store found the client's token
					// unusable, and the client should drop it.
					h[sessionHeader] = []string{token}
				}
			}), r.WithContext(ctx))
		})
	}
}
