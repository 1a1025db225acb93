// Package backfill rewrites the documents of an older schema version
// through the one upgrade function (domain.Upgrade, which repo.Decode
// calls on every read), in the background: `shop migrate --backfill`.
//
// Reads upgrade every document in memory already, so the backfill is
// never needed for correctness: it lets the upgrade code of an old
// version be deleted (docs/architecture.md, "Schema versions"). What it
// does, per container of typed shop documents (Containers):
//
//   - It pages the container with a cross-partition query of every
//     document, and for each one below domain.SchemaVersion decodes it
//     with repo.Decode (which upgrades it) and replaces it with If-Match
//     on the _etag read. A 412 means someone wrote it meanwhile, and
//     every writer of this build writes the current version: it is read
//     again and checked. A 404 means it is gone: skipped.
//   - A document newer than the build (a newer instance wrote it) is
//     never rewritten: counted as "newer".
//   - A document that carries a ttl (its own, or its container's default
//     ttl, as carts have) is not rewritten, because a replace restarts
//     its ttl clock: an abandoned cart would live 30 more days. Counted
//     as "left to expire": it is upgraded when something writes it, or
//     it expires.
//   - A document whose type the backfill does not know, or whose typed
//     round trip would lose a field (decoded into its Go type and encoded
//     again at its own version, it differs from the stored bytes), is not
//     rewritten: counted as "kept", and Run fails at the end naming it,
//     so nothing is ever lost silently.
//
// Resumable: after every page a checkpoint document in `leases` records,
// per container, the query continuation reached and the counts so far; a
// run that finds an unfinished checkpoint goes on from it. Why a query
// and a checkpoint rather than each container's change feed from the
// beginning under a lease of its own: the feed hands back every document
// the backfill itself rewrites (a second read each), and it has no end
// while the shop writes; a query's continuation is a position in the
// container's key order (store.Query.Continuation), so each document is
// read once, a rewrite does not move it, and a run ends. Idempotent: a
// finished checkpoint is kept as the record of the last run, and the next
// run starts from the top again, reads everything and rewrites nothing
// (every document is current): its cost is the reads alone.
//
// Within a budget: every call's request charge (store.Metered) is paced
// against Options.RUPerSecond, so the shop's own traffic keeps the rest
// of the container's throughput.
package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// Containers are the containers of typed shop documents, in the order the
// backfill visits them. `leases` is not among them: the processors'
// records are theirs (feedworkers/changefeed), and the backfill's own
// checkpoint lives there.
var Containers = []string{
	store.ProductsContainer, store.ReviewsContainer, store.CartsContainer, store.OrdersContainer,
	store.ProductsByCategoryContainer, store.ProductsByTermContainer, store.OrdersByStatusContainer,
	store.InventoryContainer, store.WebhooksContainer,
}

// DefaultRUPerSecond is the budget of `shop migrate --backfill` without
// --ru-per-second: half of the 400 RU/s a container gets by default.
const DefaultRUPerSecond = 200

// DefaultPageSize is the documents of one query page: small enough that
// one page's charge is a fraction of a second of the budget.
const DefaultPageSize = 100

// maxRaces is how many times a document is read again after a 412 before
// the backfill gives up on it for this run (counted as raced).
const maxRaces = 3

// Options configure a run.
type Options struct {
	// RUPerSecond is the budget; 0 means DefaultRUPerSecond.
	RUPerSecond float64
	// PageSize is the documents of one query page; 0 means
	// DefaultPageSize.
	PageSize int
	// Containers to visit; nil means Containers.
	Containers []string
	// Log receives a progress line per container every ProgressEvery
	// documents read, and at its end, then the summary; nil discards.
	Log           io.Writer
	ProgressEvery int
}

// Counts are what a run did in one container (or in all).
type Counts struct {
	Read     int `json:"read"`
	Upgraded int `json:"upgraded"`
	// Current were at domain.SchemaVersion already (or written since by
	// someone else: a 412 read again).
	Current int `json:"current"`
	// Expiring carry a ttl: left to expire, upgraded when written.
	Expiring int `json:"expiring"`
	// Newer were written by a newer build: never rewritten.
	Newer int `json:"newer"`
	// Gone were deleted between the page and the write (404).
	Gone int `json:"gone"`
	// Raced lost maxRaces If-Match races in a row to writers that, being
	// of an older build, kept writing the older version; a later run
	// takes them.
	Raced int `json:"raced"`
	// Kept are of an unknown type or would not round-trip: not rewritten,
	// and the run fails.
	Kept int `json:"kept"`
	// RURead and RUWritten are the request charges of the queries and
	// reads, and of the replaces.
	RURead    float64 `json:"ruRead"`
	RUWritten float64 `json:"ruWritten"`
}

func (c *Counts) add(o Counts) {
	c.Read += o.Read
	c.Upgraded += o.Upgraded
	c.Current += o.Current
	c.Expiring += o.Expiring
	c.Newer += o.Newer
	c.Gone += o.Gone
	c.Raced += o.Raced
	c.Kept += o.Kept
	c.RURead += o.RURead
	c.RUWritten += o.RUWritten
}

// Skipped is every document read and not rewritten.
func (c Counts) Skipped() int { return c.Read - c.Upgraded }

// Report is what a run did: per container and in all, including the
// pages of an interrupted run it resumed.
type Report struct {
	Containers map[string]Counts
	Total      Counts
	// Resumed says the run went on from an unfinished checkpoint.
	Resumed bool
	// KeptIDs names the documents counted as kept (container/pk/id).
	KeptIDs []string
}

// CheckpointID is the id (and partition key) of the checkpoint document
// in `leases` of the backfill to SchemaVersion.
var CheckpointID = fmt.Sprintf("backfill.schema-%d", domain.SchemaVersion)

// TypeCheckpoint is the checkpoint document's type.
const TypeCheckpoint = "backfillCheckpoint"

// checkpoint is the backfill's position: per container the continuation
// of the next page and the counts so far.
type checkpoint struct {
	domain.Meta
	Containers map[string]position `json:"containers"`
	Finished   bool                `json:"finished"`
	UpdatedAt  time.Time           `json:"updatedAt"`
}

type position struct {
	Continuation string   `json:"continuation,omitempty"`
	Done         bool     `json:"done"`
	Counts       Counts   `json:"counts"`
	Kept         []string `json:"kept,omitempty"`
}

// Run backfills s. It returns what it did; on an error (a cancelled
// context included) the checkpoint holds the position of the last page
// finished, and the next run goes on from it.
func Run(ctx context.Context, s store.Store, opts Options) (Report, error) {
	if opts.RUPerSecond <= 0 {
		opts.RUPerSecond = DefaultRUPerSecond
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.PageSize > store.MaxQueryPageSize {
		opts.PageSize = store.MaxQueryPageSize
	}
	if opts.Containers == nil {
		opts.Containers = Containers
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 1000
	}
	defs := map[string]store.ContainerDef{}
	for _, d := range migrations.Containers {
		defs[d.ID] = d
	}
	ms := store.Metered(s)
	b := &run{opts: opts, pace: pacer{rate: opts.RUPerSecond}, leases: ms.Container(store.LeasesContainer)}
	cp, err := b.loadCheckpoint(ctx)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Containers: map[string]Counts{}, Resumed: cp.ETag != "" && !cp.Finished}
	if cp.Finished || cp.Containers == nil {
		cp.Containers = map[string]position{}
		cp.Finished = false
	}
	for _, name := range opts.Containers {
		def, ok := defs[name]
		if !ok {
			return rep, fmt.Errorf("backfill: no container %q in migrations.Containers", name)
		}
		pos := cp.Containers[name]
		if !pos.Done {
			pos, err = b.container(ctx, ms.Container(name), def, pos, func(p position) error {
				cp.Containers[name] = p
				// Saved even when ctx is cancelled: the position of an
				// interrupted run is what the next one goes on from.
				return b.saveCheckpoint(context.WithoutCancel(ctx), &cp)
			})
			cp.Containers[name] = pos
		}
		rep.Containers[name] = pos.Counts
		rep.Total.add(pos.Counts)
		rep.KeptIDs = append(rep.KeptIDs, pos.Kept...)
		if err != nil {
			b.summary(rep)
			return rep, err
		}
	}
	cp.Finished = true
	if err := b.saveCheckpoint(ctx, &cp); err != nil {
		return rep, err
	}
	b.summary(rep)
	if rep.Total.Kept > 0 {
		return rep, fmt.Errorf("backfill: %d documents kept at their version (unknown type, or their Go type would lose a field): %s", rep.Total.Kept, strings.Join(rep.KeptIDs, ", "))
	}
	return rep, nil
}

type run struct {
	opts   Options
	pace   pacer
	leases store.Container
	// ru is the whole run's charge so far, for the progress lines.
	ru float64
}

// charged runs one call under a meter of its own, paces the charge, and
// returns it.
func (b *run) charged(ctx context.Context, call func(ctx context.Context) error) (float64, error) {
	mctx, m := store.WithMeter(ctx)
	err := call(mctx)
	_, ru, _ := m.Totals()
	b.ru += ru
	// A wait cut short by ctx is not this call's error: what it did is
	// counted, and the next call fails on ctx.
	b.pace.wait(ctx, ru)
	return ru, err
}

// container goes through one container from pos, calling save after each
// page.
func (b *run) container(ctx context.Context, c store.Container, def store.ContainerDef, pos position, save func(position) error) (position, error) {
	pkProp := strings.TrimPrefix(def.PartitionKeyPath, "/")
	defaultTTL := def.DefaultTTL != nil && *def.DefaultTTL > 0
	nextLog := (pos.Counts.Read/b.opts.ProgressEvery + 1) * b.opts.ProgressEvery
	for {
		var page store.QueryPage
		ru, err := b.charged(ctx, func(ctx context.Context) error {
			var err error
			page, err = c.Query(ctx, store.Query{Limit: b.opts.PageSize, Continuation: pos.Continuation})
			return err
		})
		pos.Counts.RURead += ru
		if err != nil {
			return pos, fmt.Errorf("backfill %s: %w", def.ID, err)
		}
		for _, raw := range page.Items {
			if err := b.document(ctx, c, def.ID, pkProp, defaultTTL, raw, &pos); err != nil {
				// Interrupted part-way through a page: keep its counts
				// (the writes done are done) at the page's start, which
				// the next run reads again (its documents rewritten
				// already count as read twice, and current).
				if serr := save(pos); serr != nil {
					err = errors.Join(err, serr)
				}
				return pos, err
			}
		}
		pos.Continuation, pos.Done = page.Continuation, page.Continuation == ""
		if err := save(pos); err != nil {
			return pos, err
		}
		if pos.Counts.Read >= nextLog || pos.Done {
			b.progress(def.ID, pos.Counts)
			nextLog = (pos.Counts.Read/b.opts.ProgressEvery + 1) * b.opts.ProgressEvery
		}
		if pos.Done {
			return pos, nil
		}
	}
}

// head is what the backfill reads of every document before its type.
type head struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	SchemaVersion int    `json:"schemaVersion"`
	ETag          string `json:"_etag"`
	TTL           *int   `json:"ttl"`
}

// document handles one document of a page.
// maxKeptNames bounds the names of kept documents a checkpoint records
// per container (the counts go on): a checkpoint is one document.
const maxKeptNames = 100

func (p *position) keep(name string) {
	p.Counts.Kept++
	if len(p.Kept) < maxKeptNames {
		p.Kept = append(p.Kept, name)
	}
}

func (b *run) document(ctx context.Context, c store.Container, container, pkProp string, defaultTTL bool, raw []byte, pos *position) error {
	pos.Counts.Read++
	for race := 0; ; race++ {
		var h head
		if err := json.Unmarshal(raw, &h); err != nil {
			return fmt.Errorf("backfill %s: a document that is not JSON: %v", container, err)
		}
		var pk string
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err == nil {
			_ = json.Unmarshal(fields[pkProp], &pk)
		}
		name := container + "/" + pk + "/" + h.ID
		switch {
		case h.SchemaVersion > domain.SchemaVersion:
			pos.Counts.Newer++
			return nil
		case h.SchemaVersion == domain.SchemaVersion:
			pos.Counts.Current++
			return nil
		case expires(h.TTL, defaultTTL):
			pos.Counts.Expiring++
			return nil
		}
		k, ok := kinds[h.Type]
		if !ok {
			pos.keep(name + " (unknown type " + h.Type + ")")
			return nil
		}
		if err := k.lossless(raw); err != nil {
			pos.keep(name + " (" + err.Error() + ")")
			return nil
		}
		ru, err := b.charged(ctx, func(ctx context.Context) error { return k.replace(ctx, c, pk, h.ID, raw, h.ETag) })
		pos.Counts.RUWritten += ru
		switch {
		case err == nil:
			pos.Counts.Upgraded++
			return nil
		case domain.IsCode(err, domain.ENOTFOUND):
			pos.Counts.Gone++
			return nil
		case !domain.IsCode(err, domain.EPRECONDITION):
			return fmt.Errorf("backfill %s: %w", name, err)
		case race+1 >= maxRaces:
			pos.Counts.Raced++
			return nil
		}
		// Written meanwhile: read it again and look.
		var r store.ItemResponse
		ru, err = b.charged(ctx, func(ctx context.Context) error {
			var err error
			r, err = c.Read(ctx, pk, h.ID)
			return err
		})
		pos.Counts.RURead += ru
		switch {
		case domain.IsCode(err, domain.ENOTFOUND):
			pos.Counts.Gone++
			return nil
		case err != nil:
			return fmt.Errorf("backfill %s: %w", name, err)
		}
		raw = r.Item
	}
}

// expires reports whether a document with that ttl, in a container with
// a default ttl or not, expires: a replace would restart its clock. An
// item ttl of -1 never expires.
func expires(ttl *int, containerDefault bool) bool {
	if ttl != nil {
		return *ttl != -1
	}
	return containerDefault
}

func (b *run) progress(container string, c Counts) {
	fmt.Fprintf(b.opts.Log, "backfill %-19s read %d, upgraded %d, skipped %d (current %d, left to expire %d, newer %d, gone %d, raced %d, kept %d), %.2f RU so far\n",
		container, c.Read, c.Upgraded, c.Skipped(), c.Current, c.Expiring, c.Newer, c.Gone, c.Raced, c.Kept, b.ru)
}

func (b *run) summary(r Report) {
	t := r.Total
	fmt.Fprintf(b.opts.Log, "backfill to schema version %d: %d documents read, %d upgraded, %d current, %d left to expire (they carry a ttl: a rewrite would restart it; upgraded when next written), %d newer than this build (never rewritten), %d gone, %d raced, %d kept; %.2f RU read, %.2f RU written, %.2f RU in all with the checkpoint\n",
		domain.SchemaVersion, t.Read, t.Upgraded, t.Current, t.Expiring, t.Newer, t.Gone, t.Raced, t.Kept, t.RURead, t.RUWritten, b.ru)
}

// loadCheckpoint reads the checkpoint; a missing one is a fresh start.
func (b *run) loadCheckpoint(ctx context.Context) (checkpoint, error) {
	var cp checkpoint
	_, err := b.charged(ctx, func(ctx context.Context) error {
		var err error
		cp, err = repo.ReadDoc[checkpoint](ctx, b.leases, CheckpointID, CheckpointID)
		return err
	})
	if domain.IsCode(err, domain.ENOTFOUND) {
		return checkpoint{Meta: domain.Meta{ID: CheckpointID, Type: TypeCheckpoint, SchemaVersion: domain.SchemaVersion}}, nil
	}
	return cp, err
}

// saveCheckpoint writes the checkpoint. One run writes it at a time: a
// second run at once would race for it (If-Match on the one read), and
// the loser stops.
func (b *run) saveCheckpoint(ctx context.Context, cp *checkpoint) error {
	cp.UpdatedAt = time.Now().UTC()
	cp.SchemaVersion = domain.SchemaVersion
	var out checkpoint
	_, err := b.charged(ctx, func(ctx context.Context) error {
		var err error
		out, err = repo.UpsertDoc(ctx, b.leases, CheckpointID, *cp, &store.WriteOptions{IfMatch: cp.ETag})
		return err
	})
	if domain.IsCode(err, domain.EPRECONDITION) {
		return errors.New("backfill: another run moved the checkpoint: run one backfill at a time")
	}
	if err != nil {
		return fmt.Errorf("backfill checkpoint: %w", err)
	}
	cp.ETag = out.ETag
	return nil
}

// pacer keeps the charge within rate RU per second on average: after a
// call of c RU the next one waits until c/rate seconds past the later of
// now and the previous call's slot.
type pacer struct {
	rate float64
	next time.Time
}

func (p *pacer) wait(ctx context.Context, ru float64) {
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	p.next = p.next.Add(time.Duration(ru / p.rate * float64(time.Second)))
	d := time.Until(p.next)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
