package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain/payments"
)

// Payments answers every payment the provider keeps, declined ones
// included, in id order: for audits and invariant checkers, which must
// see all of them to count what was held and charged. It panics on a
// closed provider or an unreadable file: an audit that cannot read must
// not pass as an audit that found nothing.
func (p *Provider) Payments() []payments.Payment {
	var out []payments.Payment
	p.view(func(tx *bolt.Tx) error {
		return tx.Bucket(paymentsBucket).ForEach(func(k, v []byte) error {
			var r record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("payments: decode %q: %w", k, err)
			}
			out = append(out, r.Payment)
			return nil
		})
	})
	return out
}

// ByOrder answers the order's payments in id order (a prefix of the
// order index, not a scan). It panics as Payments does.
func (p *Provider) ByOrder(orderID string) []payments.Payment {
	var out []payments.Payment
	prefix := orderKey(orderID, "")
	p.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(ordersBucket).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			r, err := load(tx, string(k[len(prefix):]))
			if err != nil {
				return err
			}
			out = append(out, r.Payment)
		}
		return nil
	})
	return out
}

func (p *Provider) view(fn func(tx *bolt.Tx) error) {
	if err := p.db.View(fn); err != nil {
		panic(err)
	}
}
