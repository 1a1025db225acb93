package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// This file is a webhook receiver's side, written by hand: the shop
// POSTs each event it has for a subscription to the subscription's URL,
// signed (package api/webhooksig of the shop says how; this package
// imports nothing of the shop, so it verifies on its own, the same way).

// The headers of a webhook request.
const (
	WebhookSignatureHeader = "Shop-Signature"        // t=<unix>,v1=<hex>[,v1=<hex>...]
	WebhookEventIDHeader   = "Shop-Event-Id"         // the same on every attempt: drop a repeat
	WebhookEventTypeHeader = "Shop-Event-Type"       // "order.placed"
	WebhookAttemptHeader   = "Shop-Delivery-Attempt" // 1, 2, ...
)

// MaxWebhookBody bounds the body WebhookHandler reads: an event is a few
// KB (an order of many lines stays well under it).
const MaxWebhookBody = 1 << 20

// ErrWebhookSignature is in the chain of VerifyWebhook's error when the
// request is not the shop's: no valid signature under the secret, or a
// time outside the tolerance (a replay).
var ErrWebhookSignature = errors.New("webhook: bad signature")

// WebhookEvent is the body of a webhook request: one event. Events of one
// Subject (an order, a product) arrive in Sequence order; delivery is at
// least once, so the same ID may come twice.
type WebhookEvent struct {
	ID         string    `json:"id"`
	EventType  string    `json:"eventType"` // "order.placed", "product.price_changed", ...
	Subject    string    `json:"subject"`   // the order's or the product's id
	Sequence   int64     `json:"sequence"`
	OccurredAt time.Time `json:"occurredAt"`
	// UserID is set on an order's events, ProductID on a product's.
	UserID    string `json:"userId,omitempty"`
	ProductID string `json:"productId,omitempty"`
	// Order or Product is the payload.
	Order   *WebhookOrder   `json:"order,omitempty"`
	Product *WebhookProduct `json:"product,omitempty"`
}

// WebhookOrder is an order as its events carry it.
type WebhookOrder struct {
	ID              string             `json:"id"`
	UserID          string             `json:"userId"`
	Status          string             `json:"status"`
	PreviousStatus  string             `json:"previousStatus"`
	Customer        WebhookCustomer    `json:"customer"`
	Items           []WebhookOrderLine `json:"items"`
	ItemCount       int                `json:"itemCount"`
	SubtotalCents   int64              `json:"subtotalCents"`
	TotalCents      int64              `json:"totalCents"`
	Currency        string             `json:"currency"`
	ShippingAddress WebhookAddress     `json:"shippingAddress"`
	CreatedAt       time.Time          `json:"createdAt"`
	Payment         string             `json:"payment"` // authorized, captured, voided, refunded, declined, none
	Rejection       *WebhookRejection  `json:"rejection,omitempty"`
}

// WebhookCustomer is who placed an order.
type WebhookCustomer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// WebhookOrderLine is one line of an order.
type WebhookOrderLine struct {
	ProductID      string `json:"productId"`
	Name           string `json:"name"`
	UnitPriceCents int64  `json:"unitPriceCents"`
	Quantity       int    `json:"quantity"`
	LineTotalCents int64  `json:"lineTotalCents"`
}

// WebhookAddress is an order's shipping address.
type WebhookAddress struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

// WebhookRejection says why an order was rejected.
type WebhookRejection struct {
	Reason      string            `json:"reason"` // out_of_stock, declined
	DeclineCode string            `json:"declineCode,omitempty"`
	Message     string            `json:"message,omitempty"`
	Shortages   []WebhookShortage `json:"shortages,omitempty"`
}

// WebhookShortage is a line the stock could not serve.
type WebhookShortage struct {
	ProductID string `json:"productId"`
	Requested int64  `json:"requested"`
	Available int64  `json:"available"`
}

// WebhookProduct is a product as its events carry it.
type WebhookProduct struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	CategoryID   string `json:"categoryId"`
	PriceCents   int64  `json:"priceCents"`
	Currency     string `json:"currency"`
	Availability string `json:"availability"` // in_stock, low_stock, sold_out; "" untracked
	Deleted      bool   `json:"deleted,omitempty"`
}

// VerifyWebhook checks that body came from the shop, signed with secret
// (one of the Shop-Signature header's v1 values matches, compared in
// constant time) no further than tolerance from now (0: 5 minutes), and
// decodes it. Verify the bytes as received, before any decoding.
func VerifyWebhook(header http.Header, body []byte, secret string, tolerance time.Duration) (WebhookEvent, error) {
	if err := verifyWebhookSignature(header.Get(WebhookSignatureHeader), body, secret, tolerance, time.Now()); err != nil {
		return WebhookEvent{}, err
	}
	var e WebhookEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return WebhookEvent{}, fmt.Errorf("webhook: decode the event: %w", err)
	}
	return e, nil
}

func verifyWebhookSignature(sig string, body []byte, secret string, tolerance time.Duration, now time.Time) error {
	if tolerance <= 0 {
		tolerance = 5 * time.Minute
	}
	ts := ""
	var sigs [][]byte
	for part := range strings.SplitSeq(sig, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: malformed %s header", ErrWebhookSignature, WebhookSignatureHeader)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	match := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			match = true
		}
	}
	if !match {
		return fmt.Errorf("%w: no signature matches", ErrWebhookSignature)
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance", ErrWebhookSignature)
	}
	return nil
}

// WebhookHandler serves a webhook receiver: it reads at most
// MaxWebhookBody bytes of the request, answers 400 to a request that
// VerifyWebhook refuses (a bad signature, an old timestamp, a body that
// is not an event) or 413 to a body too large, and otherwise calls
// handle: 204 when it returns nil, 500 when it fails (the shop tries
// again later). Only POST is served.
func WebhookHandler(secret string, tolerance time.Duration, handle func(WebhookEvent) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		e, err := VerifyWebhook(r.Header, body, secret, tolerance)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := handle(e); err != nil {
			http.Error(w, "handling the event failed", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
