package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store/repo"
)

// The admin's webhook routes (/v1/admin/webhooks): subscriptions to the
// shop's events (domain/events.go) and their deliveries, stored in the
// `webhooks` container by repo.Webhooks and sent by feedworkers/webhooks.
// A subscription's signing secret is answered twice only: by the create
// and by a rotation. Every other answer carries no secret, and no log
// line does: the views below are the only shapes a subscription leaves in.

// MaxSubscriptions bounds the subscriptions the shop keeps: every event is
// matched against each of them, and each match is a delivery to write and
// send. A create past the bound is a 409 (the shop's state, not the
// request, refuses it: deleting one makes room).
const MaxSubscriptions = 100

// Rotation overlaps: how long a rotated-out secret still signs
// deliveries, so a receiver can deploy the new one without refusing any.
const (
	DefaultSecretOverlap = 24 * time.Hour
	MaxSecretOverlap     = 7 * 24 * time.Hour
)

// subscriptionRequest creates a subscription.
type subscriptionRequest struct {
	URL        string   `json:"url" validate:"required,max=2000,line"`
	EventTypes []string `json:"eventTypes" validate:"required,min=1,max=20,unique,dive,eventtype"`
	// Description is the admin's note: who receives, why.
	Description string `json:"description" validate:"max=500,text"`
}

// subscriptionPatch is a JSON merge patch of a subscription: absent
// fields stay as they are.
type subscriptionPatch struct {
	URL         *string   `json:"url" validate:"omitempty,max=2000,line"`
	EventTypes  *[]string `json:"eventTypes" validate:"omitempty,min=1,max=20,unique,dive,eventtype"`
	Description *string   `json:"description" validate:"omitempty,max=500,text"`
	// Paused stops the deliveries without losing them: they wait, pending,
	// until the subscription is resumed.
	Paused *bool `json:"paused"`
}

// mediaType: a patch is sent as a merge patch, as a product's is.
func (subscriptionPatch) mediaType() string { return mediaMergePatch }

// rotateRequest rotates a subscription's secret. OverlapSeconds is how
// long the secret it replaces still signs (absent: DefaultSecretOverlap).
type rotateRequest struct {
	OverlapSeconds *int64 `json:"overlapSeconds" validate:"omitempty,min=0,max=604800"`
}

// subscriptionView is a subscription as every answer shows it: never a
// secret, only when the previous one (if any) stops signing.
type subscriptionView struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	EventTypes  []string  `json:"eventTypes"`
	Description string    `json:"description"`
	Paused      bool      `json:"paused"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// PreviousSecretExpiresAt is when the last rotated-out secret stops
	// signing; absent when none still does.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt,omitempty"`
}

// viewSubscription shows s as of now: a rotated-out secret past its
// expiry is gone for the receiver even before the store drops it.
func viewSubscription(s domain.Subscription, now time.Time) subscriptionView {
	v := subscriptionView{
		ID: s.ID, URL: s.URL, EventTypes: s.EventTypes, Description: s.Description, Paused: s.Paused,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	if v.EventTypes == nil {
		v.EventTypes = []string{}
	}
	for _, sec := range s.Secrets {
		if sec.ExpiresAt != nil && sec.ExpiresAt.After(now) &&
			(v.PreviousSecretExpiresAt == nil || sec.ExpiresAt.After(*v.PreviousSecretExpiresAt)) {
			at := *sec.ExpiresAt
			v.PreviousSecretExpiresAt = &at
		}
	}
	return v
}

// subscriptionWithSecret is the answer of a create and of a rotation:
// the one time the secret is shown.
type subscriptionWithSecret struct {
	subscriptionView
	Secret string `json:"secret"`
}

// subscriptionList is every subscription.
type subscriptionList struct {
	Items []subscriptionView `json:"items"`
}

// deliveryView is a delivery as the admin sees it: its state, not the
// dispatcher's claim on it nor the body it sends.
type deliveryView struct {
	ID             string     `json:"id"`
	SubscriptionID string     `json:"subscriptionId"`
	EventID        string     `json:"eventId"`
	EventType      string     `json:"eventType"`
	Subject        string     `json:"subject"`
	Sequence       int64      `json:"sequence"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  time.Time  `json:"nextAttemptAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	RedeliveredAt  *time.Time `json:"redeliveredAt,omitempty"`
	DeliveredAt    *time.Time `json:"deliveredAt,omitempty"`
	LastStatus     int        `json:"lastStatus,omitempty"`
	LastError      string     `json:"lastError,omitempty"`
}

func viewDelivery(d domain.Delivery) deliveryView {
	return deliveryView{
		ID: d.ID, SubscriptionID: d.SubscriptionID, EventID: d.EventID, EventType: d.EventType,
		Subject: d.Subject, Sequence: d.Sequence, Status: d.Status, Attempts: d.Attempts,
		NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt, RedeliveredAt: d.RedeliveredAt, DeliveredAt: d.DeliveredAt,
		LastStatus: d.LastStatus, LastError: d.LastError,
	}
}

// handleWebhookCreate creates a subscription and answers its secret, the
// one time it is shown with the subscription. Two store operations: the
// list that counts the subscriptions against MaxSubscriptions, and the
// create. Two admins creating the 100th at once may both pass the count:
// the bound is a guard against runaway growth, not an invariant.
func handleWebhookCreate(hooks *repo.Webhooks, policy webhooks.Policy, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[subscriptionRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		// A refusal names /url (webhooks.Policy.Check: https unless
		// allowed, no loopback, private, link-local or metadata address
		// unless allowed).
		if err := policy.Check(req.URL); err != nil {
			writeProblem(w, r, err)
			return
		}
		existing, err := hooks.List(r.Context(), MaxSubscriptions)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if len(existing) >= MaxSubscriptions {
			writeProblem(w, r, domain.Errorf(domain.ECONFLICT, "the shop keeps at most %d webhook subscriptions: delete one first", MaxSubscriptions))
			return
		}
		// The repository makes the id and the secret.
		at := now().UTC()
		sub, secret, err := hooks.Create(r.Context(), domain.Subscription{
			URL: req.URL, EventTypes: req.EventTypes, Description: req.Description,
		}, at)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, sub.ETag)
		w.Header().Set("Location", "/v1/admin/webhooks/"+sub.ID)
		encode(w, http.StatusCreated, subscriptionWithSecret{viewSubscription(sub, at), secret})
	}
}

// handleWebhookList lists the subscriptions (at most MaxSubscriptions, so
// one page): one query across the subscriptions' partitions.
func handleWebhookList(hooks *repo.Webhooks, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		subs, err := hooks.List(r.Context(), MaxSubscriptions)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		at := now()
		items := make([]subscriptionView, len(subs))
		for i, s := range subs {
			items[i] = viewSubscription(s, at)
		}
		encode(w, http.StatusOK, subscriptionList{Items: items})
	}
}

// handleWebhookGet is one subscription, with its ETag: one point read.
func handleWebhookGet(hooks *repo.Webhooks, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "subscriptionId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		sub, err := hooks.Get(r.Context(), id)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, sub.ETag)
		encode(w, http.StatusOK, viewSubscription(sub, now()))
	}
}

// handleWebhookPatch changes a subscription with If-Match (412 when
// stale): a read and a replace, as every read-modify-write.
func handleWebhookPatch(hooks *repo.Webhooks, policy webhooks.Policy, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "subscriptionId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[subscriptionPatch](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if req.URL != nil {
			if err := policy.Check(*req.URL); err != nil {
				writeProblem(w, r, err)
				return
			}
		}
		at := now().UTC()
		sub, err := hooks.Update(r.Context(), id, ifMatch(r), func(s *domain.Subscription) error {
			if req.URL != nil {
				s.URL = *req.URL
			}
			if req.EventTypes != nil {
				s.EventTypes = *req.EventTypes
			}
			if req.Description != nil {
				s.Description = *req.Description
			}
			if req.Paused != nil {
				s.Paused = *req.Paused
			}
			return nil
		}, at)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, sub.ETag)
		encode(w, http.StatusOK, viewSubscription(sub, at))
	}
}

// handleWebhookDelete deletes a subscription: its deliveries are sent no
// more (the repository removes or orphans them; none is signed again).
func handleWebhookDelete(hooks *repo.Webhooks) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "subscriptionId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if err := hooks.Delete(r.Context(), id); err != nil {
			writeProblem(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// handleWebhookRotate gives a subscription a new secret, answered once;
// the one it replaces keeps signing (next to the new one) for the
// overlap, so a receiver that still checks the old one refuses nothing
// while it deploys the new one. The body is optional.
func handleWebhookRotate(hooks *repo.Webhooks, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "subscriptionId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		overlap := DefaultSecretOverlap
		if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
			req, err := decode[rotateRequest](r)
			if err != nil {
				writeProblem(w, r, err)
				return
			}
			if req.OverlapSeconds != nil {
				overlap = time.Duration(*req.OverlapSeconds) * time.Second
			}
		}
		at := now().UTC()
		sub, secret, err := hooks.RotateSecret(r.Context(), id, overlap, at)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, sub.ETag)
		encode(w, http.StatusOK, subscriptionWithSecret{viewSubscription(sub, at), secret})
	}
}

// deliveryStatuses are the values of the deliveries list's ?status=.
var deliveryStatuses = []string{domain.DeliveryPending, domain.DeliveryDelivered, domain.DeliveryDead}

// handleWebhookDeliveries lists a subscription's deliveries, of one status
// or all, one page: one single-partition query (the subscription's
// partition holds its deliveries). An unknown subscription has none: an
// empty page, not a 404, which would take a second read on every page.
func handleWebhookDeliveries(hooks *repo.Webhooks) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "subscriptionId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		status := r.URL.Query().Get("status")
		if status != "" && !slices.Contains(deliveryStatuses, status) {
			writeProblem(w, r, domain.Errorf(domain.EINVALID, "status must be pending, delivered or dead"))
			return
		}
		limit, cont, err := pageParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		page, err := hooks.ListDeliveries(r.Context(), id, status, limit, cont)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		items, err := page.Decode()
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, pageOf(mapSlice(items, viewDelivery), page.Next))
	}
}

// handleWebhookRedeliver puts a dead delivery back to pending, due now
// (its attempts start again); any other is a 409.
func handleWebhookRedeliver(hooks *repo.Webhooks, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "subscriptionId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		deliveryID, err := pathID(r, "deliveryId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		d, err := hooks.Redeliver(r.Context(), id, deliveryID, now().UTC())
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, viewDelivery(d))
	}
}
