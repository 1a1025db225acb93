// Package webhooksig signs the shop's webhook requests and verifies them,
// in the shape Stripe documents for its own: the Shop-Signature header
// holds the time of sending and one HMAC-SHA256 per signing secret,
//
//	Shop-Signature: t=1796525644,v1=5257a869...,v1=6ffbb59b...
//
// each v1 the hex HMAC, keyed by a secret, of "<t>.<body>". The time in
// the signed text lets a receiver refuse a request replayed later; one
// v1 per valid secret lets a subscription rotate its secret while its
// receiver still knows only the old one.
package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The headers of a webhook request.
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex>[,v1=<hex>...]".
	SignatureHeader = "Shop-Signature"
	// EventIDHeader is the event's id: the same on every attempt and
	// every subscription, so a receiver can drop a repeat (delivery is at
	// least once).
	EventIDHeader = "Shop-Event-Id"
	// EventTypeHeader is the event type ("order.placed").
	EventTypeHeader = "Shop-Event-Type"
	// AttemptHeader is the attempt's number, from 1.
	AttemptHeader = "Shop-Delivery-Attempt"
)

// DefaultTolerance is how far from the receiver's clock a signature's
// time may be (Stripe's default too).
const DefaultTolerance = 5 * time.Minute

// Errors of Verify (test with errors.Is).
var (
	ErrMalformed = errors.New("webhooksig: malformed signature header")
	ErrNoMatch   = errors.New("webhooksig: no signature matches the body and secret")
	ErrTooOld    = errors.New("webhooksig: timestamp outside the tolerance (a replay?)")
)

// Sign returns the SignatureHeader value of body sent at t: one v1 per
// secret, in the order given (newest first by convention).
func Sign(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(s, ts, body)))
	}
	return b.String()
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks header (a SignatureHeader value) against body and secret:
// at least one v1 must be the HMAC of "<t>.<body>" under secret (compared
// in constant time), and t within tolerance of now either way (0:
// DefaultTolerance), so a captured request replayed later is refused.
// Elements it does not know (v0, a future scheme) are ignored.
func Verify(header string, body []byte, secret string, tolerance time.Duration, now time.Time) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts := ""
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformed
		}
		switch k {
		case "t":
			if ts != "" {
				return ErrMalformed
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				continue // not one of ours: it cannot match
			}
			sigs = append(sigs, sig)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if ts == "" || err != nil {
		return fmt.Errorf("%w: no timestamp", ErrMalformed)
	}
	if len(sigs) == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrMalformed)
	}
	want := mac(secret, ts, body)
	match := false
	for _, s := range sigs {
		// Every one is compared, matched or not: the time taken says
		// nothing about which.
		if hmac.Equal(s, want) {
			match = true
		}
	}
	if !match {
		return ErrNoMatch
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrTooOld
	}
	return nil
}
