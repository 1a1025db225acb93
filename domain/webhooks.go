package domain

import (
	"encoding/json"
	"time"
)

// Webhooks deliver the events (events.go) to other systems: a
// Subscription names a receiver's URL and the event types it wants; one
// Delivery per event and subscription records its delivery, from pending
// to delivered or dead. Both live in the `webhooks` container under the
// subscription's id (pk /subscriptionId), so a subscription's deliveries
// are one partition: the dispatcher finds the due ones with one
// single-partition query, and claims each with If-Match.

// Document types of the webhooks container.
const (
	TypeSubscription = "subscription"
	TypeDelivery     = "delivery"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"   // to be sent (again) at NextAttemptAt
	DeliveryDelivered = "delivered" // a 2xx answered it
	DeliveryDead      = "dead"      // given up: the dead-letter list; redeliver puts it back
)

// Subscription is a receiver of events.
type Subscription struct {
	Meta
	SubscriptionID string   `json:"subscriptionId"` // = ID, the partition key
	URL            string   `json:"url"`
	EventTypes     []string `json:"eventTypes"`
	Description    string   `json:"description"`
	Paused         bool     `json:"paused"`
	// Secrets sign the deliveries: the newest first; one rotated out
	// stays valid (and signs too) until its ExpiresAt.
	Secrets   []WebhookSecret `json:"secrets"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// WebhookSecret is one signing secret of a subscription.
type WebhookSecret struct {
	Secret    string     `json:"secret"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// Wants reports whether s wants events of type t.
func (s Subscription) Wants(t string) bool {
	for _, w := range s.EventTypes {
		if w == t {
			return true
		}
	}
	return false
}

// ValidSecrets are the secrets of s that still sign at now, newest
// first: the current one and those rotated out whose ExpiresAt is after
// now.
func (s Subscription) ValidSecrets(now time.Time) []string {
	var out []string
	for _, k := range s.Secrets {
		if k.ExpiresAt == nil || now.Before(*k.ExpiresAt) {
			out = append(out, k.Secret)
		}
	}
	return out
}

// Delivery is one event on its way to one subscription.
type Delivery struct {
	Meta
	SubscriptionID string `json:"subscriptionId"`
	EventID        string `json:"eventId"`
	EventType      string `json:"eventType"`
	// Subject and Sequence are the event's: a delivery is not sent while
	// one of the same subscription and subject with a lower sequence is
	// pending (in order per order, per product).
	Subject  string `json:"subject"`
	Sequence int64  `json:"sequence"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	// NextAttemptAt is when a pending delivery is due.
	NextAttemptAt time.Time `json:"nextAttemptAt"`
	CreatedAt     time.Time `json:"createdAt"`
	// RedeliveredAt is when a dead delivery was last put back to pending
	// (the admin's redeliver): its retry horizon starts again there.
	RedeliveredAt *time.Time `json:"redeliveredAt,omitempty"`
	DeliveredAt   *time.Time `json:"deliveredAt,omitempty"`
	// LastStatus is the receiver's last HTTP status (0: no answer),
	// LastError why the last attempt failed.
	LastStatus int    `json:"lastStatus,omitempty"`
	LastError  string `json:"lastError,omitempty"`
	// ClaimedBy and ClaimedUntil: the dispatcher instance sending it now,
	// and until when its claim holds (another instance may take a
	// delivery whose claim ran out).
	ClaimedBy    string     `json:"claimedBy,omitempty"`
	ClaimedUntil *time.Time `json:"claimedUntil,omitempty"`
	// Body is the request body sent to the receiver: the event as its
	// webhook carries it, the same bytes on every attempt.
	Body json.RawMessage `json:"body"`
}

// DeliveryID is the id of the delivery of event eventID (unique within
// its subscription's partition): writing it twice, as a feed handler
// that replays a batch does, is a conflict, not a second delivery.
func DeliveryID(eventID string) string { return "delivery-" + eventID }
