package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/store"
)

// defaultFeedPage is the page size when the caller gives none (Cosmos's
// default max item count of a change-feed request).
const defaultFeedPage = 100

// ReadFeedRanges returns one range per simulated physical partition, so a
// change-feed processor really holds one lease per partition.
func (c *Container) ReadFeedRanges(ctx context.Context) ([]store.FeedRange, error) {
	if err := ctx.Err(); err != nil {
		return nil, canceled(err)
	}
	st, err := c.s.state(c.name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(st.ranges), nil
}

// ReadChangeFeed reads one feed range in latest-version mode. Every write
// moved its item to the next LSN of its physical partition and dropped the
// previous entry, so walking the LSNs after the continuation yields each
// changed item once, in its newest version, in write order (hence in order
// per partition key); deleted and expired items are absent. maxItems <= 0
// means 100, Cosmos's default page size for the change feed.
// Remaining costs nothing per entry (see remaining). FeedFromNow reads the
// partition's latest LSN and nothing else. A range that split is gone; a
// continuation of it is honored on the partitions that replaced it, since
// they kept its LSNs (split.go).
func (c *Container) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	if err := ctx.Err(); err != nil {
		return store.ChangeFeedPage{}, canceled(err)
	}
	st, err := c.s.acquire(c.name)
	if err != nil {
		return store.ChangeFeedPage{}, err
	}
	defer st.release()
	p, err := rangeIndex(st.ranges, r)
	if err != nil {
		if _, gone := st.splitFrom(r.String()); gone {
			return store.ChangeFeedPage{}, store.FeedRangeGone(r)
		}
		return store.ChangeFeedPage{}, err
	}
	if maxItems <= 0 {
		maxItems = defaultFeedPage
	}
	if continuation == store.FeedFromNow {
		return c.feedNow(st, p)
	}
	if err := c.s.admit(st, p); err != nil {
		return store.ChangeFeedPage{}, err
	}
	var after uint64
	if continuation != "" {
		if after, err = c.feedPosition(st, p, continuation); err != nil {
			return store.ChangeFeedPage{}, err
		}
	}
	now := c.s.opts.Now()
	var page store.ChangeFeedPage
	var sizes []int
	last := after
	err = c.s.db.View(func(tx *bolt.Tx) error {
		items := tx.Bucket(st.items[p])
		feed := tx.Bucket(st.feed[p])
		cur := feed.Cursor()
		k, v := cur.Seek(lsnKey(after + 1))
		for ; k != nil && len(page.Items) < maxItems; k, v = cur.Next() {
			last = binary.BigEndian.Uint64(k)
			val := items.Get(v)
			if val == nil {
				continue
			}
			h, doc, err := parseHeader(val)
			if err != nil {
				return err
			}
			if expired(&st.def, h, now) {
				continue
			}
			page.Items = append(page.Items, bytes.Clone(doc))
			sizes = append(sizes, len(doc))
		}
		page.Remaining = remaining(feed.Sequence(), &last, k == nil)
		return nil
	})
	if err != nil {
		return store.ChangeFeedPage{}, storeError(err)
	}
	if page.Continuation, err = c.feedToken(st, p, last); err != nil {
		return store.ChangeFeedPage{}, err
	}
	page.RequestCharge = feedCharge(sizes)
	c.s.charge(st, page.RequestCharge, p)
	return page, nil
}

// feedPosition returns the LSN a continuation of partition p resumes
// after. The token names the range it was made for: p's own, or one that
// split into partitions p descends from (p's hashes inside it).
func (c *Container) feedPosition(st *containerState, p int, continuation string) (uint64, error) {
	t, err := decodeToken(c.s.secret, continuation, tokenFeed, c.name)
	if err != nil {
		return 0, err
	}
	if t.Range != st.ranges[p].String() {
		if parent, ok := st.splitFrom(t.Range); !ok || !parent.contains(st.parts[p]) {
			return 0, invalidToken("it belongs to feed range " + t.Range)
		}
	}
	return t.LSN, nil
}

func (c *Container) feedToken(st *containerState, p int, lsn uint64) (string, error) {
	return encodeToken(c.s.secret, token{Kind: tokenFeed, Container: c.name, Range: st.ranges[p].String(), LSN: lsn})
}

// feedNow is the empty page at the present end of partition p: its
// latest LSN, one read of the feed bucket's sequence and no item. It is
// charged nothing, as on Cosmos, where no request is sent until the first
// read from it.
func (c *Container) feedNow(st *containerState, p int) (store.ChangeFeedPage, error) {
	var latest uint64
	err := c.s.db.View(func(tx *bolt.Tx) error {
		latest = tx.Bucket(st.feed[p]).Sequence()
		return nil
	})
	if err != nil {
		return store.ChangeFeedPage{}, storeError(err)
	}
	tok, err := c.feedToken(st, p, latest)
	return store.ChangeFeedPage{Continuation: tok}, err
}

// remaining estimates the entries after *last as Cosmos's change feed
// estimator does: the partition's latest LSN minus the continuation's LSN.
// Rewrites and deletes after *last make it an over-estimate, never a
// miss. At the end of the feed (atEnd) it is 0 and *last moves up to the
// latest LSN, which every later write exceeds: a reader that has caught
// up reports no lag even when the newest entries were deleted.
func remaining(latest uint64, last *uint64, atEnd bool) int64 {
	if atEnd {
		*last = max(*last, latest)
		return 0
	}
	// An entry after *last exists, so latest > *last.
	return int64(latest - *last)
}
