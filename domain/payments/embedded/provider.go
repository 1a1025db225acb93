// Package embedded is the shop's default payment provider: no account,
// no network. It keeps its payments in a bbolt file, follows Stripe's
// test payment methods (payments.TestMethods: pm_card_visa authorizes,
// pm_card_chargeDeclinedInsufficientFunds declines with
// insufficient_funds), and holds the port's contract as Stripe does:
// every move is idempotent by its key, and a key answers the payment as
// it is now.
//
// For tests it can fail on demand (InjectFaults: a timeout, a 5xx, an
// answer lost after the move took effect) and list every payment
// (Payments, ByOrder), so invariant checkers can count what was held and
// charged.
package embedded

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
)

var _ payments.Provider = (*Provider)(nil)

// Provider keeps payments in a bbolt file. It is safe for concurrent use:
// each call is one bbolt transaction, and bbolt runs one writing
// transaction at a time, so two workers authorizing the same key never
// make two payments.
type Provider struct {
	db     *bolt.DB
	tmpDir string // removed on Close when Open was given no path
	faults atomic.Pointer[func(op, key string) Fault]
	// writing counts the calls writing now (commit).
	writing atomic.Int32
}

// The file's buckets.
var (
	paymentsBucket = []byte("payments") // payment id → record
	keysBucket     = []byte("keys")     // idempotency key → keyRecord
	ordersBucket   = []byte("orders")   // order id, 0, payment id → nothing
)

// record is a payment as the file keeps it: the port's Payment and what
// the authorization asked, so a reused key can be told apart.
type record struct {
	payments.Payment
	Currency      string `json:"currency"`
	PaymentMethod string `json:"paymentMethod"`
}

// keyRecord is what an idempotency key was used for.
type keyRecord struct {
	Op        string `json:"op"`
	PaymentID string `json:"paymentId"`
}

// Open opens or creates the provider's file at path. With path "" it
// keeps its file in a temporary directory removed on Close, and skips
// fsync: for tests.
func Open(path string) (*Provider, error) {
	p := &Provider{}
	opts := &bolt.Options{Timeout: 5 * time.Second}
	if path == "" {
		dir, err := os.MkdirTemp("", "payments-*")
		if err != nil {
			return nil, err
		}
		p.tmpDir, path, opts.NoSync = dir, filepath.Join(dir, "payments.db"), true
	}
	db, err := bolt.Open(path, 0o600, opts)
	if err != nil {
		p.removeTmp()
		return nil, fmt.Errorf("payments: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{paymentsBucket, keysBucket, ordersBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		p.removeTmp()
		return nil, fmt.Errorf("payments: open %s: %w", path, err)
	}
	// Concurrent calls share one transaction and one fsync (Batch,
	// commit): a flash sale's authorizations would otherwise queue one
	// fsync each behind bbolt's single writer.
	db.MaxBatchDelay = time.Millisecond
	p.db = db
	return p, nil
}

// Close closes the file (and removes it if Open made it).
func (p *Provider) Close() error {
	err := p.db.Close()
	p.removeTmp()
	return err
}

func (p *Provider) removeTmp() {
	if p.tmpDir != "" {
		os.RemoveAll(p.tmpDir)
	}
}

// Authorize holds a.AmountCents on a.PaymentMethod, one of
// payments.TestMethods: a declining one answers a Declined payment, which
// is kept like any other so its key answers it again.
func (p *Provider) Authorize(ctx context.Context, a payments.Authorization) (payments.Payment, error) {
	if err := a.Validate(); err != nil {
		return payments.Payment{}, err
	}
	var pay payments.Payment
	err := p.write(ctx, payments.StepAuthorize, a.Key, func(tx *bolt.Tx) error {
		k, seen, err := getJSON[keyRecord](tx.Bucket(keysBucket), a.Key)
		if err != nil {
			return err
		}
		if seen {
			r, err := reuse(tx, k, a.Key, payments.StepAuthorize, "")
			if err != nil {
				return err
			}
			if r.OrderID != a.OrderID || r.AmountCents != a.AmountCents || r.Currency != a.Currency || r.PaymentMethod != a.PaymentMethod {
				return domain.Errorf(domain.EUNPROCESSABLE, "payments: key %q authorized %d %s for order %s, not this authorization", a.Key, r.AmountCents, r.Currency, r.OrderID)
			}
			pay = r.Payment
			return nil
		}
		m, ok := payments.LookupTestMethod(a.PaymentMethod)
		if !ok {
			return fmt.Errorf("%w: %q", payments.ErrUnknownMethod, a.PaymentMethod)
		}
		r := record{
			Payment:       payments.Payment{ID: "pi_" + rand.Text(), OrderID: a.OrderID, AmountCents: a.AmountCents, Status: payments.Authorized},
			Currency:      a.Currency,
			PaymentMethod: a.PaymentMethod,
		}
		if m.DeclineCode != "" {
			r.Status, r.DeclineCode, r.Message = payments.Declined, m.DeclineCode, m.Message
		}
		if err := putJSON(tx.Bucket(paymentsBucket), r.ID, r); err != nil {
			return err
		}
		if err := tx.Bucket(ordersBucket).Put(orderKey(a.OrderID, r.ID), nil); err != nil {
			return err
		}
		pay = r.Payment
		return putJSON(tx.Bucket(keysBucket), a.Key, keyRecord{Op: payments.StepAuthorize, PaymentID: r.ID})
	})
	if err != nil {
		return payments.Payment{}, err
	}
	return pay, nil
}

// Capture charges an authorization.
func (p *Provider) Capture(ctx context.Context, paymentID, key string) (payments.Payment, error) {
	return p.move(ctx, payments.StepCapture, paymentID, key)
}

// Void releases an authorization (or closes a declined one).
func (p *Provider) Void(ctx context.Context, paymentID, key string) (payments.Payment, error) {
	return p.move(ctx, payments.StepVoid, paymentID, key)
}

// Refund gives a capture back.
func (p *Provider) Refund(ctx context.Context, paymentID, key string) (payments.Payment, error) {
	return p.move(ctx, payments.StepRefund, paymentID, key)
}

// move makes the step (payments.Moves) on the payment under key. A key
// seen before answers the payment as it is now. A move from any other
// state is ErrState and leaves the key unused: states only move forward,
// so the same call would be refused again.
func (p *Provider) move(ctx context.Context, op, id, key string) (payments.Payment, error) {
	m, _ := payments.MoveOf(op)
	if key == "" {
		return payments.Payment{}, domain.Errorf(domain.EINVALID, "payments: %s needs an idempotency key", op)
	}
	var pay payments.Payment
	var state error
	err := p.write(ctx, op, key, func(tx *bolt.Tx) error {
		k, seen, err := getJSON[keyRecord](tx.Bucket(keysBucket), key)
		if err != nil {
			return err
		}
		if seen {
			r, err := reuse(tx, k, key, op, id)
			pay = r.Payment
			return err
		}
		r, err := load(tx, id)
		if err != nil {
			return err
		}
		pay = r.Payment
		if !m.StartsFrom(r.Status) {
			state = payments.ErrState // nothing to write: commit the empty transaction
			return nil
		}
		r.Status = m.To
		pay = r.Payment
		if err := putJSON(tx.Bucket(paymentsBucket), id, r); err != nil {
			return err
		}
		return putJSON(tx.Bucket(keysBucket), key, keyRecord{Op: op, PaymentID: id})
	})
	if err != nil {
		return payments.Payment{}, err
	}
	if state != nil {
		return pay, fmt.Errorf("%w: %s of a payment %s", state, op, pay.Status)
	}
	return pay, nil
}

// Get answers the payment as it is.
func (p *Provider) Get(ctx context.Context, paymentID string) (payments.Payment, error) {
	var r record
	err := p.call(ctx, opGet, paymentID, func() error {
		return p.db.View(func(tx *bolt.Tx) error {
			var err error
			r, err = load(tx, paymentID)
			return err
		})
	})
	if err != nil {
		return payments.Payment{}, err
	}
	return r.Payment, nil
}

// write runs fn as the call op with key, in one writing transaction.
func (p *Provider) write(ctx context.Context, op, key string, fn func(tx *bolt.Tx) error) error {
	return p.call(ctx, op, key, func() error { return p.commit(fn) })
}

// commit runs fn in a writing transaction: its own, at once, when no
// other call is writing; otherwise in a Batch with the calls under way,
// so a flash sale's authorizations share a transaction and its fsync.
// A lone call in a Batch would wait MaxBatchDelay for company that is
// not coming: every checkout that meets no other paid that wait on top
// of its commit (`shop cost --writepath`, the time in the provider).
func (p *Provider) commit(fn func(tx *bolt.Tx) error) error {
	defer p.writing.Add(-1)
	if p.writing.Add(1) == 1 {
		return p.db.Update(fn)
	}
	// Batch may run fn more than once (again alone, if another call of
	// its batch failed): each fn reads what it needs and writes only
	// when it commits, so a run again decides the same.
	return p.db.Batch(fn)
}

// reuse answers a key seen before: the payment it moved, as it is now,
// if it was used for the same move of the same payment (id "" for an
// authorization, whose id the caller cannot know).
func reuse(tx *bolt.Tx, k keyRecord, key, op, id string) (record, error) {
	if k.Op != op || (id != "" && k.PaymentID != id) {
		return record{}, domain.Errorf(domain.EUNPROCESSABLE, "payments: key %q was used to %s payment %s", key, k.Op, k.PaymentID)
	}
	return load(tx, k.PaymentID)
}

func load(tx *bolt.Tx, id string) (record, error) {
	r, ok, err := getJSON[record](tx.Bucket(paymentsBucket), id)
	if err != nil {
		return record{}, err
	}
	if !ok {
		return record{}, fmt.Errorf("%w: %s", payments.ErrNotFound, id)
	}
	return r, nil
}

// orderKey is a payment's key in the order index: the order id, a 0
// byte (which no id holds) and the payment id, so an order's payments
// are one prefix.
func orderKey(orderID, paymentID string) []byte {
	return append(append([]byte(orderID), 0), paymentID...)
}

func getJSON[T any](b *bolt.Bucket, key string) (T, bool, error) {
	var v T
	data := b.Get([]byte(key))
	if data == nil {
		return v, false, nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, false, fmt.Errorf("payments: decode %q: %w", key, err)
	}
	return v, true, nil
}

func putJSON(b *bolt.Bucket, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), data)
}
