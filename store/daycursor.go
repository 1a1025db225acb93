package store

import (
	"encoding/base64"
	"encoding/json"

	"shop/domain"
)

// dayCursor is the continuation of OrderSummaries.DayPage: where each
// bucket of the day stands. A bucket's position is a store continuation
// and the items to skip after it, because a page of the merge may take
// only part of a bucket's store page. It names its status and day, so a
// cursor is refused on another day's query.
type dayCursor struct {
	StatusDay string      `json:"k"`
	Buckets   []BucketPos `json:"b"`
}

// BucketPos is one bucket's position in the day query.
type BucketPos struct {
	Continuation string `json:"c,omitempty"`
	Skip         int    `json:"s,omitempty"`
	Done         bool   `json:"d,omitempty"`
}

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
		if b.Skip < 0 || b.Skip > MaxQueryPageSize {
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
