package backfill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// kind is what the backfill does with the documents of one type: the Go
// type the shop reads and writes them as.
type kind struct {
	// lossless refuses a document that its Go type, decoded and encoded
	// again at its own version, would not store as it is.
	lossless func(raw []byte) error
	// replace decodes raw with repo.Decode (the upgrade) and replaces
	// the stored document with If-Match etag, through repo.ReplaceDoc
	// and so through domain.Writable.
	replace func(ctx context.Context, c store.Container, pk, id string, raw []byte, etag string) error
}

func kindOf[T any]() kind {
	return kind{
		lossless: func(raw []byte) error {
			var v T
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			again, err := json.Marshal(v)
			if err != nil {
				return err
			}
			return sameFields(raw, again)
		},
		replace: func(ctx context.Context, c store.Container, pk, id string, raw []byte, etag string) error {
			v, err := repo.Decode[T](raw)
			if err != nil {
				return err
			}
			_, err = repo.ReplaceDoc(ctx, c, pk, id, v, &store.WriteOptions{IfMatch: etag})
			return err
		},
	}
}

// kinds maps each document type of the backfill's containers to its Go
// type: the one its repository decodes it as (store/repo), so that
// feedworkers.Kinds and this table name the same types
// (TestKindsCoverTheAudit).
var kinds = map[string]kind{
	domain.TypeProduct:         kindOf[domain.Product](),
	domain.TypeCategories:      kindOf[domain.Categories](),
	domain.TypeEvent:           kindOf[domain.Event](),
	domain.TypeReview:          kindOf[domain.Review](),
	domain.TypeCart:            kindOf[domain.Cart](),
	domain.TypeOrder:           kindOf[domain.Order](),
	domain.TypeCustomerSummary: kindOf[domain.CustomerSummary](),
	domain.TypeIdempotency:     kindOf[domain.Idempotency](),
	domain.TypeVoidedOrder:     kindOf[domain.VoidedOrder](),
	domain.TypeStock:           kindOf[domain.Stock](),
	domain.TypeReservation:     kindOf[domain.Reservation](),
	domain.TypeStockShard:      kindOf[domain.Stock](),
	domain.TypeTransfer:        kindOf[domain.Transfer](),
	domain.TypeProductSummary:  kindOf[domain.ProductSummary](),
	domain.TypeSearchEntry:     kindOf[domain.SearchEntry](),
	domain.TypeSearchTombstone: kindOf[domain.SearchEntry](),
	domain.TypeSearchLedger:    kindOf[domain.SearchLedger](),
	domain.TypeOrderSummary:    kindOf[domain.OrderSummary](),
	domain.TypeSubscription:    kindOf[domain.Subscription](),
	domain.TypeDelivery:        kindOf[domain.Delivery](),
}

// systemFields are the store's own properties: the store writes them,
// never the document.
var systemFields = []string{"_etag", "_ts", "_rid", "_self", "_attachments", "_lsn"}

// sameFields reports the first field of stored whose value again does
// not hold: missing (unless it was empty: omitempty drops it) or
// different. Fields again adds (zero values of fields the stored
// document predates) are fine.
func sameFields(stored, again []byte) error {
	var a, b any
	if err := json.Unmarshal(stored, &a); err != nil {
		return err
	}
	if err := json.Unmarshal(again, &b); err != nil {
		return err
	}
	am, _ := a.(map[string]any)
	for _, f := range systemFields {
		delete(am, f)
	}
	return covers("", a, b)
}

func covers(path string, a, b any) error {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: would become %s", orTop(path), short(b))
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok {
				if empty(x) {
					continue
				}
				return fmt.Errorf("field %s would be lost", path+"/"+k)
			}
			if err := covers(path+"/"+k, x, y); err != nil {
				return err
			}
		}
		return nil
	case []any:
		bv, ok := b.([]any)
		if !ok || len(bv) != len(av) {
			if empty(a) && empty(b) {
				return nil
			}
			return fmt.Errorf("%s: would become %s", orTop(path), short(b))
		}
		for i := range av {
			if err := covers(fmt.Sprintf("%s/%d", path, i), av[i], bv[i]); err != nil {
				return err
			}
		}
		return nil
	case string:
		if bs, ok := b.(string); ok && (bs == av || sameTime(av, bs)) {
			return nil
		}
	default:
		if reflect.DeepEqual(a, b) || (empty(a) && empty(b)) {
			return nil
		}
	}
	return fmt.Errorf("%s: %s would become %s", orTop(path), short(a), short(b))
}

func sameTime(a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}

// empty is a value omitempty drops, or null.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func orTop(p string) string {
	if p == "" {
		return "the document"
	}
	return "field " + p
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(bytes.TrimSpace(b))
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
