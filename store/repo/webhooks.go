package repo

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strconv"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Webhooks is the repository of `webhooks` (pk /subscriptionId): the
// subscriptions and, in each one's partition, its deliveries
// (domain/webhooks.go). Every delivery query is single-partition; only
// List, the subscriptions of every partition, fans out.
//
// A delivery's life is written here and nowhere else: created pending by
// the relay (CreateDelivery), claimed by one dispatcher (Claim), then
// delivered (Complete), retried later (Fail) or given up (MarkDead), each
// with If-Match on the version the caller holds, so two dispatchers never
// both write the outcome of one attempt; the admin puts a dead one back
// (Redeliver).
type Webhooks struct{ c store.Container }

// NewWebhooks returns the webhooks repository over s.
func NewWebhooks(s store.Store) *Webhooks { return &Webhooks{s.Container(store.WebhooksContainer)} }

// How long a delivery stays after it ended: the container's default ttl
// is -1 (on, no expiry), so each delivery carries its own.
const (
	// DeliveredTTL: a delivered delivery is kept 3 days, to be looked at.
	DeliveredTTL = 3 * 24 * time.Hour
	// DeadTTL: a dead one is kept 14 days, the time the dead-letter list
	// gives an operator to fix the receiver and redeliver it.
	DeadTTL = 14 * 24 * time.Hour
	// PendingTTL: a pending delivery expires PendingTTL after its last
	// write (each attempt rewrites it), as long as its event
	// (domain.EventRetention). A dispatched one is delivered or dead long
	// before (the retry horizon is a day); the ttl only bounds those of a
	// subscription paused for a week, and the few a relay may still
	// create for a subscription just deleted.
	PendingTTL = domain.EventRetention
)

// MaxSubscriptions bounds List: the most subscriptions the shop serves.
const MaxSubscriptions = 1000

// SecretPrefix begins every signing secret.
const SecretPrefix = "whsec_"

func ttlOf(d time.Duration) *int {
	s := int(d / time.Second)
	return &s
}

// NewSecret returns a new signing secret: SecretPrefix and 32 bytes from
// crypto/rand, base64url without padding.
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Create stores sub as a new subscription with a new id ("wh-" and 12
// random hex digits) and a new signing secret, and returns it as stored
// and the secret (which the API shows once). Unknown event types are
// EINVALID.
func (r *Webhooks) Create(ctx context.Context, sub domain.Subscription, now time.Time) (domain.Subscription, string, error) {
	for i, t := range sub.EventTypes {
		if !domain.ValidEventType(t) {
			return domain.Subscription{}, "", &domain.Error{Code: domain.EINVALID, Message: "unknown event type " + t,
				Fields: []domain.FieldError{{Pointer: "/eventTypes/" + strconv.Itoa(i), Detail: "unknown event type"}}}
		}
	}
	id := "wh-" + domain.RandomSuffix()
	secret := NewSecret()
	sub.Meta = domain.Meta{ID: id, Type: domain.TypeSubscription, SchemaVersion: domain.SchemaVersion}
	sub.SubscriptionID = id
	sub.Secrets = []domain.WebhookSecret{{Secret: secret, CreatedAt: now}}
	sub.CreatedAt, sub.UpdatedAt = now, now
	if sub.EventTypes == nil {
		sub.EventTypes = []string{}
	}
	out, err := CreateDoc(ctx, r.c, id, sub)
	if err != nil {
		return domain.Subscription{}, "", err
	}
	return out, secret, nil
}

func subscriptionNotFound(id string) error {
	return domain.Errorf(domain.ENOTFOUND, "webhook subscription %q not found", id)
}

// Get returns the subscription; ENOTFOUND if there is none.
func (r *Webhooks) Get(ctx context.Context, id string) (domain.Subscription, error) {
	s, err := ReadDoc[domain.Subscription](ctx, r.c, id, id)
	if domain.IsCode(err, domain.ENOTFOUND) || (err == nil && s.Type != domain.TypeSubscription) {
		return domain.Subscription{}, subscriptionNotFound(id)
	}
	return s, err
}

// List returns up to limit subscriptions (0: store.DefaultPageSize; at
// most MaxSubscriptions), ordered by id. It is a cross-partition query,
// paged to the end or to limit: the dispatcher and the relay call it
// every few seconds, and there are few subscriptions.
func (r *Webhooks) List(ctx context.Context, limit int) ([]domain.Subscription, error) {
	if limit <= 0 {
		limit = store.DefaultPageSize
	}
	limit = min(limit, MaxSubscriptions)
	out := []domain.Subscription{}
	q := store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeSubscription}},
		Limit:   min(limit, store.MaxQueryPageSize),
	}
	for {
		items, next, err := queryPage[domain.Subscription](ctx, r.c, q)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" || len(out) >= limit {
			break
		}
		q.Continuation = next
	}
	slices.SortFunc(out, func(a, b domain.Subscription) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Update is the subscription's read-modify-write (see update): change
// edits it, ifMatch is the client's If-Match ("" lets the server retry
// its own races). What identifies the subscription (id, type, created
// time) and its secrets (RotateSecret) are kept whatever change does;
// UpdatedAt becomes now. ErrUnchanged from change skips the write.
func (r *Webhooks) Update(ctx context.Context, id string, ifMatch Precondition, change func(*domain.Subscription) error, now time.Time) (domain.Subscription, error) {
	s, _, err := update(ctx, r.c, id, id, rmw[domain.Subscription]{what: "webhook subscription " + id, ifMatch: ifMatch}, func(s *domain.Subscription) error {
		if s.Type != domain.TypeSubscription {
			return subscriptionNotFound(id)
		}
		keep := *s
		if err := change(s); err != nil {
			return err
		}
		s.Meta, s.SubscriptionID, s.CreatedAt, s.Secrets = keep.Meta, keep.SubscriptionID, keep.CreatedAt, keep.Secrets
		for i, t := range s.EventTypes {
			if !domain.ValidEventType(t) {
				return &domain.Error{Code: domain.EINVALID, Message: "unknown event type " + t,
					Fields: []domain.FieldError{{Pointer: "/eventTypes/" + strconv.Itoa(i), Detail: "unknown event type"}}}
			}
		}
		s.UpdatedAt = now
		return nil
	})
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.Subscription{}, subscriptionNotFound(id)
	}
	return s, err
}

// RotateSecret gives the subscription a new signing secret, first in
// Secrets, and returns the subscription and the secret. Each previous
// secret stays valid (and keeps signing, so a receiver can switch at its
// pace) until now+overlap, or until its ExpiresAt if that is sooner;
// those already expired are dropped.
func (r *Webhooks) RotateSecret(ctx context.Context, id string, overlap time.Duration, now time.Time) (domain.Subscription, string, error) {
	secret := NewSecret()
	until := now.Add(max(overlap, 0))
	s, _, err := update(ctx, r.c, id, id, rmw[domain.Subscription]{what: "webhook subscription " + id}, func(s *domain.Subscription) error {
		if s.Type != domain.TypeSubscription {
			return subscriptionNotFound(id)
		}
		keep := []domain.WebhookSecret{{Secret: secret, CreatedAt: now}}
		for _, k := range s.Secrets {
			if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
				continue
			}
			if k.ExpiresAt == nil || until.Before(*k.ExpiresAt) {
				u := until
				k.ExpiresAt = &u
			}
			if !now.Before(*k.ExpiresAt) { // overlap 0: gone at once
				continue
			}
			keep = append(keep, k)
		}
		s.Secrets = keep
		s.UpdatedAt = now
		return nil
	})
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.Subscription{}, "", subscriptionNotFound(id)
	}
	if err != nil {
		return domain.Subscription{}, "", err
	}
	return s, secret, nil
}

// Delete removes the subscription, then every delivery of it (its whole
// partition): nothing of a deleted subscription is kept. ENOTFOUND if
// there was no subscription; its deliveries are swept all the same, so a
// Delete interrupted half-way is finished by calling it again. A relay
// whose cache still held the subscription may create a delivery after
// the sweep; PendingTTL removes it.
func (r *Webhooks) Delete(ctx context.Context, id string) error {
	_, err := r.c.Delete(ctx, id, id, nil)
	if domain.IsCode(err, domain.ENOTFOUND) {
		err = subscriptionNotFound(id)
	} else if err != nil {
		return err
	}
	q := store.Query{
		PartitionKey: id,
		Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeDelivery}},
		Select:       []string{"id"},
		Limit:        store.MaxQueryPageSize,
	}
	for {
		// Deleting under a continuation would skip items: read the first
		// page again each time, until it is empty.
		items, _, qerr := queryPage[domain.Meta](ctx, r.c, q)
		if qerr != nil {
			return qerr
		}
		if len(items) == 0 {
			return err
		}
		for _, it := range items {
			if _, derr := r.c.Delete(ctx, id, it.ID, nil); derr != nil && !domain.IsCode(derr, domain.ENOTFOUND) {
				return derr
			}
		}
	}
}

// CreateDelivery stores d as a new pending delivery (id
// domain.DeliveryID(d.EventID) unless set, ttl PendingTTL). ECONFLICT
// means it is there already: a relay replaying a batch created it
// before, and treats the conflict as done, not as an error.
func (r *Webhooks) CreateDelivery(ctx context.Context, d domain.Delivery) error {
	if d.ID == "" {
		d.ID = domain.DeliveryID(d.EventID)
	}
	d.Type, d.SchemaVersion, d.ETag, d.TS = domain.TypeDelivery, domain.SchemaVersion, "", 0
	d.TTL = ttlOf(PendingTTL)
	if d.Status == "" {
		d.Status = domain.DeliveryPending
	}
	_, err := CreateDoc(ctx, r.c, d.SubscriptionID, d)
	return err
}

func deliveryNotFound(id string) error {
	return domain.Errorf(domain.ENOTFOUND, "webhook delivery %q not found", id)
}

// GetDelivery returns one delivery of the subscription.
func (r *Webhooks) GetDelivery(ctx context.Context, subID, deliveryID string) (domain.Delivery, error) {
	d, err := ReadDoc[domain.Delivery](ctx, r.c, subID, deliveryID)
	if domain.IsCode(err, domain.ENOTFOUND) || (err == nil && d.Type != domain.TypeDelivery) {
		return domain.Delivery{}, deliveryNotFound(deliveryID)
	}
	return d, err
}

// pendingHead is what Due reads of every pending delivery: the projection
// leaves the bodies out.
type pendingHead struct {
	ID            string     `json:"id"`
	Subject       string     `json:"subject"`
	Sequence      int64      `json:"sequence"`
	NextAttemptAt time.Time  `json:"nextAttemptAt"`
	ClaimedUntil  *time.Time `json:"claimedUntil"`
}

// Due returns up to limit deliveries of the subscription to send now,
// the most overdue first: for each subject, its pending delivery of the
// lowest sequence, if it is due (NextAttemptAt not after now) and not
// claimed by a dispatcher whose claim still holds. A subject whose
// lowest pending delivery is not due yet, or in flight, sends nothing:
// an event is never sent before the subject's earlier ones were
// delivered or given up (dead).
//
// It reads the sequence and due time of every pending delivery of the
// subscription (one single-partition query, projected: no bodies), then
// point-reads the chosen ones whole, with their _etag for Claim. The
// pending set is as long as the receiver is behind.
func (r *Webhooks) Due(ctx context.Context, subID string, now time.Time, limit int) ([]domain.Delivery, error) {
	if limit <= 0 {
		limit = store.DefaultPageSize
	}
	q := store.Query{
		PartitionKey: subID,
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeDelivery},
			{Path: "status", Op: store.OpEqual, Value: domain.DeliveryPending},
		},
		Select: []string{"id", "subject", "sequence", "nextAttemptAt", "claimedUntil"},
		Limit:  store.MaxQueryPageSize,
	}
	heads := map[string]pendingHead{}
	for {
		items, next, err := queryPage[pendingHead](ctx, r.c, q)
		if err != nil {
			return nil, err
		}
		for _, h := range items {
			if cur, ok := heads[h.Subject]; !ok || h.Sequence < cur.Sequence {
				heads[h.Subject] = h
			}
		}
		if next == "" {
			break
		}
		q.Continuation = next
	}
	var due []pendingHead
	for _, h := range heads {
		if h.NextAttemptAt.After(now) || (h.ClaimedUntil != nil && h.ClaimedUntil.After(now)) {
			continue
		}
		due = append(due, h)
	}
	slices.SortFunc(due, func(a, b pendingHead) int {
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]domain.Delivery, 0, len(due))
	for _, h := range due {
		d, err := r.GetDelivery(ctx, subID, h.ID)
		if domain.IsCode(err, domain.ENOTFOUND) {
			continue // expired or swept since the query
		}
		if err != nil {
			return nil, err
		}
		// Again on the document itself: a dispatcher may have claimed
		// (or finished) it since the query.
		if d.Status == domain.DeliveryPending && !claimed(d, now) {
			out = append(out, d)
		}
	}
	return out, nil
}

// claimed reports whether a dispatcher's claim on d still holds at now.
func claimed(d domain.Delivery, now time.Time) bool {
	return d.ClaimedUntil != nil && d.ClaimedUntil.After(now)
}

// Pending returns the pending deliveries of one subject of the
// subscription, lowest sequence first (at most store.MaxQueryPageSize):
// the in-order check of one subject.
func (r *Webhooks) Pending(ctx context.Context, subID, subject string) ([]domain.Delivery, error) {
	items, _, err := queryPage[domain.Delivery](ctx, r.c, store.Query{
		PartitionKey: subID,
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeDelivery},
			{Path: "status", Op: store.OpEqual, Value: domain.DeliveryPending},
			{Path: "subject", Op: store.OpEqual, Value: subject},
		},
		Limit: store.MaxQueryPageSize,
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b domain.Delivery) int { return cmp.Compare(a.Sequence, b.Sequence) })
	return items, nil
}

// writeDelivery replaces d with If-Match on d's _etag: EPRECONDITION when
// someone else wrote it since d was read (another dispatcher claimed or
// finished it).
func (r *Webhooks) writeDelivery(ctx context.Context, d domain.Delivery) (domain.Delivery, error) {
	etag := d.ETag
	d.ETag, d.TS = "", 0
	out, err := ReplaceDoc(ctx, r.c, d.SubscriptionID, d.ID, d, &store.WriteOptions{IfMatch: etag})
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.Delivery{}, deliveryNotFound(d.ID)
	}
	return out, err
}

// Claim marks the pending delivery d (as read, with its _etag) as being
// sent by dispatcher instance by until until, and returns it as stored:
// its _etag is the one Complete, Fail and MarkDead need. EPRECONDITION
// means another dispatcher claimed or finished it first: skip it. So does
// a d that, as read, another dispatcher's claim still held at now (Due
// returns none such): the If-Match alone would let a claim replace
// another's that it had read.
func (r *Webhooks) Claim(ctx context.Context, d domain.Delivery, by string, now, until time.Time) (domain.Delivery, error) {
	if d.Status != domain.DeliveryPending {
		return domain.Delivery{}, domain.Errorf(domain.EPRECONDITION, "webhook delivery %q is %s", d.ID, d.Status)
	}
	if claimed(d, now) && d.ClaimedBy != by {
		return domain.Delivery{}, domain.Errorf(domain.EPRECONDITION, "webhook delivery %q is being sent by %s", d.ID, d.ClaimedBy)
	}
	d.ClaimedBy, d.ClaimedUntil = by, &until
	return r.writeDelivery(ctx, d)
}

// Complete records that the receiver answered the claimed delivery d
// with the 2xx status at now: delivered, kept DeliveredTTL.
func (r *Webhooks) Complete(ctx context.Context, d domain.Delivery, status int, now time.Time) (domain.Delivery, error) {
	d.Status, d.Attempts, d.LastStatus, d.LastError = domain.DeliveryDelivered, d.Attempts+1, status, ""
	d.DeliveredAt = &now
	d.ClaimedBy, d.ClaimedUntil = "", nil
	d.TTL = ttlOf(DeliveredTTL)
	return r.writeDelivery(ctx, d)
}

// Fail records a failed attempt at the claimed delivery d (status: the
// receiver's HTTP status, 0 without an answer; reason: why) and makes it
// due again at next.
func (r *Webhooks) Fail(ctx context.Context, d domain.Delivery, status int, reason string, next time.Time) (domain.Delivery, error) {
	d.Attempts, d.LastStatus, d.LastError = d.Attempts+1, status, reason
	d.NextAttemptAt = next
	d.ClaimedBy, d.ClaimedUntil = "", nil
	d.TTL = ttlOf(PendingTTL)
	return r.writeDelivery(ctx, d)
}

// MarkDead records a last failed attempt at the claimed delivery d and
// gives it up: dead, in the dead-letter list for DeadTTL (Redeliver puts
// it back).
func (r *Webhooks) MarkDead(ctx context.Context, d domain.Delivery, status int, reason string, now time.Time) (domain.Delivery, error) {
	d.Status, d.Attempts, d.LastStatus, d.LastError = domain.DeliveryDead, d.Attempts+1, status, reason
	d.NextAttemptAt = now
	d.ClaimedBy, d.ClaimedUntil = "", nil
	d.TTL = ttlOf(DeadTTL)
	return r.writeDelivery(ctx, d)
}

// ListDeliveries returns one page of the subscription's deliveries with
// the status ("" for all), limit per page (0: store.DefaultPageSize),
// from continuation ("" from the first). They come in id order, which is
// per subject, by sequence (domain.DeliveryID, domain.EventID).
func (r *Webhooks) ListDeliveries(ctx context.Context, subID, status string, limit int, continuation string) (Page[domain.Delivery], error) {
	q := store.Query{
		PartitionKey: subID,
		Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeDelivery}},
		Limit:        limit,
		Continuation: continuation,
	}
	if status != "" {
		q.Filters = append(q.Filters, store.Filter{Path: "status", Op: store.OpEqual, Value: status})
	}
	return rawPage[domain.Delivery](ctx, r.c, q)
}

// Redeliver puts the dead delivery back to pending, due now, with no
// attempts and a retry horizon starting now (RedeliveredAt). A delivery
// that is not dead is ECONFLICT: it is on its way, or delivered.
func (r *Webhooks) Redeliver(ctx context.Context, subID, deliveryID string, now time.Time) (domain.Delivery, error) {
	d, _, err := update(ctx, r.c, subID, deliveryID, rmw[domain.Delivery]{what: "webhook delivery " + deliveryID}, func(d *domain.Delivery) error {
		if d.Type != domain.TypeDelivery {
			return deliveryNotFound(deliveryID)
		}
		if d.Status != domain.DeliveryDead {
			return domain.Errorf(domain.ECONFLICT, "webhook delivery %q is %s: only a dead delivery can be redelivered", deliveryID, d.Status)
		}
		d.Status, d.Attempts, d.NextAttemptAt = domain.DeliveryPending, 0, now
		d.RedeliveredAt = &now
		d.ClaimedBy, d.ClaimedUntil = "", nil
		d.TTL = ttlOf(PendingTTL)
		return nil
	})
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.Delivery{}, deliveryNotFound(deliveryID)
	}
	return d, err
}
