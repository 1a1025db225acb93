package client

import (
	"fmt"
	"net/http"
	"strconv"
)

// Cost is what a response of /v1 says its request cost the store.
type Cost struct {
	// Operations is X-Store-Operations: the store calls the request made
	// (1 for every screen's read).
	Operations int
	// RequestUnits is X-Request-Charge: Request Units, the real charge on
	// Cosmos DB, the documented estimate on the embedded store. (An answer's
	// declared headers, HeadersNNN.XRequestCharge, hold it as a float64 too.)
	RequestUnits float64
	// ServerTiming is the Server-Timing entry, e.g.
	// `store;dur=0.31;desc="1 op, 1.00 RU"`.
	ServerTiming string
}

// String reads as Server-Timing's description: "1 op, 1.00 RU".
func (c Cost) String() string {
	unit := "ops"
	if c.Operations == 1 {
		unit = "op"
	}
	return fmt.Sprintf("%d %s, %.2f RU", c.Operations, unit, c.RequestUnits)
}

// CostOf reads the cost headers of a response (the HTTPResponse of any
// XxxWithResponse answer, a problem's too). A response without them, such
// as /healthz's, is an error.
func CostOf(r *http.Response) (Cost, error) {
	ops, err := strconv.Atoi(r.Header.Get("X-Store-Operations"))
	if err != nil {
		return Cost{}, fmt.Errorf("X-Store-Operations: %w", err)
	}
	ru, err := strconv.ParseFloat(r.Header.Get("X-Request-Charge"), 64)
	if err != nil {
		return Cost{}, fmt.Errorf("X-Request-Charge: %w", err)
	}
	return Cost{Operations: ops, RequestUnits: ru, ServerTiming: r.Header.Get("Server-Timing")}, nil
}

// SessionTokenOf reads X-Session-Token, sent by a shop on Cosmos DB at
// Session consistency, and after writes by a shop with its read cache on:
// send the last one received back as the X-Session-Token request header
// (Sessions does both), and any instance reads what your earlier requests
// wrote. It is sealed: send it as it came (an edited one is a 400). ok is
// false when the response has none (keep the token you hold); an empty
// token with ok means drop it.
func SessionTokenOf(r *http.Response) (token string, ok bool) {
	v := r.Header.Values("X-Session-Token")
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// ETagOf reads the ETag of a response, to send back as the IfMatch
// parameter of the next write of the same resource: that write is a 412
// if anyone changed the resource in between.
func ETagOf(r *http.Response) string {
	return r.Header.Get("ETag")
}
