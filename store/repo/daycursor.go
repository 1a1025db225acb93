package repo

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// dayCursor is the continuation of OrderSummaries.DayPage: where each
// bucket of the day stands. A page of the merge may take only part of a
// bucket's store page, so a bucket's position is a store continuation and
// the last summary the client was shown after it: the next page reads
// from the continuation again and drops what is not older than that
// summary. Not a count of summaries to skip: the admin ships the orders a
// page showed, their summaries leave the partition, and a count would
// then skip as many orders never shown. It names its status and day, so
// a cursor is refused on another day's query.
type dayCursor struct {
	StatusDay string      `json:"k"`
	Buckets   []BucketPos `json:"b"`
}

// BucketPos is one bucket's position in the day query.
type BucketPos struct {
	Continuation string `json:"c,omitempty"`
	// Shown is how many summaries of the store page at Continuation the
	// client was shown: the page is read again that much larger.
	Shown int `json:"s,omitempty"`
	// Last is the last summary the client was shown, nil at the start of
	// the bucket or of a store page.
	Last *summaryKey `json:"l,omitempty"`
	Done bool        `json:"d,omitempty"`
}

// summaryKey is a summary's place in the day query's order.
type summaryKey struct {
	CreatedAt time.Time `json:"t"`
	ID        string    `json:"i"`
}

func keyOf(s domain.OrderSummary) *summaryKey {
	return &summaryKey{CreatedAt: s.CreatedAt, ID: s.ID}
}

// unseen reports whether s comes after the position's last shown summary
// in the query's order, createdAt then id, both descending: not shown
// yet. createdAt is compared as its JSON text, as the index compares it
// (a trimmed fraction can order two instants 10 ns apart the other way).
func (p BucketPos) unseen(s domain.OrderSummary) bool {
	if p.Last == nil {
		return true
	}
	if c := strings.Compare(jsonTime(s.CreatedAt), jsonTime(p.Last.CreatedAt)); c != 0 {
		return c < 0
	}
	return s.ID < p.Last.ID
}

// jsonTime is t as encoding/json writes it in a document.
func jsonTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

// decodeDayCursor reads the continuation of a day query on statusDay over
// n buckets; "" is the start of every bucket.
func decodeDayCursor(continuation, statusDay string, n int) (dayCursor, error) {
	c := dayCursor{StatusDay: statusDay, Buckets: make([]BucketPos, n)}
	if continuation == "" {
		return c, nil
	}
	invalid := domain.Errorf(domain.EINVALID, "continuation is not one this server issued for %s", statusDay)
	raw, err := base64.RawURLEncoding.DecodeString(continuation)
	if err != nil {
		return c, invalid
	}
	var got dayCursor
	if err := json.Unmarshal(raw, &got); err != nil || got.StatusDay != statusDay || len(got.Buckets) != n {
		return c, invalid
	}
	for _, b := range got.Buckets {
		if b.Shown < 0 || b.Shown > store.MaxQueryPageSize {
			return c, invalid
		}
	}
	return got, nil
}

// encode is the cursor as the continuation a client sends back; "" when
// every bucket is done (the last page).
func (c dayCursor) encode() string {
	done := true
	for _, b := range c.Buckets {
		done = done && b.Done
	}
	if done {
		return ""
	}
	raw, err := json.Marshal(c)
	if err != nil {
		panic(err) // strings, ints and bools always marshal
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}
