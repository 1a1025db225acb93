// Package store is the shop's port onto a document database shaped like
// Azure Cosmos DB for NoSQL, its limits, and the decorators any adapter
// can wear (Metered, Patient, Traced); the typed repositories written once
// on top of it are package store/repo. Two adapters implement the port: store/embedded (a durable bbolt
// file, the default) and store/cosmos (azcosmos). store/storetest is the
// one contract suite both must pass.
//
// Items cross the port as JSON bytes, as they cross the wire to Cosmos.
// Every call returns the Request Units it cost: the real charge on Cosmos,
// the documented estimate (store/embedded/charge.go) on the embedded store.
//
// The context of a call may carry a client's session token (Session,
// session.go): an adapter that keeps session tokens sends it with its own
// and updates it from the responses; the strongly consistent embedded
// store leaves it alone. No method takes it as an argument.
//
// Errors are *domain.Error with these codes:
//   - domain.ENOTFOUND: no item with that (partition key, id), or no container
//   - domain.ECONFLICT: Create of an id that exists in the logical partition
//   - domain.EPRECONDITION: IfMatch given and the item's _etag differs, or
//     a patch's Condition does not hold on the stored item
//   - domain.EINVALID: bad id, partition key, document, patch (an incr by
//     a non-integer too), patch condition, query (a cross-partition ORDER
//     BY too) or continuation
//   - domain.ETOOLARGE: the item would exceed 2 MB, or a batch MaxBatchBytes
//   - domain.EPARTITIONFULL: the write would take its logical partition
//     past its size limit (20 GB on Cosmos: 403, substatus 1014)
//   - domain.EUNAVAILABLE: throttled (429, RetryAfter set) or unavailable
//     (503); on ReadChangeFeed also a feed range that split
//     (ErrFeedRangeGone in the chain)
package store

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
)

// Store is a database: a set of containers.
type Store interface {
	// Container returns the named container. It does not check that the
	// container exists: the first operation on a missing one is ENOTFOUND.
	Container(name string) Container
	// EnsureContainer creates the container if it is missing and updates
	// its indexing policy and default TTL if they changed. The partition
	// key of an existing container cannot change (a Cosmos rule); a
	// different one is ECONFLICT. It reports whether anything changed.
	EnsureContainer(ctx context.Context, def ContainerDef) (changed bool, err error)
	// Ping checks the store can serve requests (for /readyz).
	Ping(ctx context.Context) error
	Close() error
}

// Container is one Cosmos container. Every item operation names the
// partition key value and, except Create and Upsert, the id: a point
// operation by (pk, id) is the cheapest call Cosmos has.
type Container interface {
	// Read returns the item. ENOTFOUND if missing (or expired by TTL).
	Read(ctx context.Context, pk, id string) (ItemResponse, error)
	// ReadIfNoneMatch is Read with If-None-Match: when the item's ETag is
	// etag it answers NotModified with that ETag and no Item (Cosmos 304:
	// the document is not sent), otherwise as Read. It is charged as the
	// read: the item is still looked up.
	ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (ItemResponse, error)
	// Create stores a new item; ECONFLICT if its id exists in pk.
	Create(ctx context.Context, pk string, item []byte) (ItemResponse, error)
	// Replace overwrites an existing item; ENOTFOUND if missing,
	// EPRECONDITION if opts.IfMatch is set and stale.
	Replace(ctx context.Context, pk, id string, item []byte, opts *WriteOptions) (ItemResponse, error)
	// Upsert creates or replaces. IfMatch guards the replace only: on an
	// item that exists a stale one is EPRECONDITION, and a missing item
	// is created whatever it says (Cosmos; If-Match names a version of an
	// item, which a create has none of). Read-modify-write goes through
	// Replace, which is ENOTFOUND for a missing item.
	Upsert(ctx context.Context, pk string, item []byte, opts *WriteOptions) (ItemResponse, error)
	// Patch applies ops atomically to an existing item (Cosmos partial
	// document update). With opts.Condition it is a conditional write:
	// the predicate is evaluated on the stored item in the same atomic
	// step as the patch, and when it does not hold the patch is refused
	// with EPRECONDITION and nothing changes (Cosmos answers 412). So
	// "incr /available -n if available >= n" takes stock in ONE write
	// that two concurrent takers cannot both win, with no read-modify-
	// write loop. ENOTFOUND if the item is missing; an invalid condition
	// is EINVALID before anything is asked of the store, and so are more
	// than MaxPatchOps operations.
	Patch(ctx context.Context, pk, id string, ops []PatchOp, opts *PatchOptions) (ItemResponse, error)
	// Delete removes the item. Deletes do not appear on the change feed
	// (latest-version mode), so the shop soft-deletes where copies exist.
	Delete(ctx context.Context, pk, id string, opts *WriteOptions) (ItemResponse, error)
	// ExecuteBatch runs ops as one transaction inside ONE logical
	// partition: all commit or none do. At most MaxBatchOps operations
	// (EINVALID past it) of at most MaxBatchBytes in all (BatchSize;
	// ETOOLARGE past it), each patch of at most MaxPatchOps operations.
	// When the batch is not committed the error carries the code of the
	// first failing operation and the response still holds every
	// operation's result (Cosmos returns 424 for the others).
	ExecuteBatch(ctx context.Context, pk string, ops []BatchOp) (BatchResponse, error)
	// Query runs a structured query: single-partition when q.PartitionKey
	// is set, cross-partition (fanned out to every physical partition, and
	// reported as such) when it is empty. ORDER BY needs q.PartitionKey: a
	// cross-partition query with OrderBy is EINVALID (see Query.OrderBy).
	Query(ctx context.Context, q Query) (QueryPage, error)
	// ReadFeedRanges returns the container's feed ranges: one per physical
	// partition. A change-feed processor holds one lease per range. The
	// set changes when a physical partition splits (Cosmos splits one
	// that outgrows its storage or throughput): the range is replaced by
	// its children, which together cover exactly its part of the
	// partition-key hash space.
	ReadFeedRanges(ctx context.Context) ([]FeedRange, error)
	// ReadChangeFeed returns up to maxItems changed items of one feed range
	// after the continuation ("" = from the beginning, FeedFromNow = from
	// the present), in latest-version mode: only the newest version of
	// each item, ordered per partition key, intermediate versions may be
	// skipped, deletes are absent. A page with no items means "nothing
	// new yet"; keep its continuation.
	//
	// A continuation survives a split: one returned for a range that has
	// since split is valid on each child, where it yields exactly the
	// child's changes after the position it marks (none lost, none from
	// before). Reading the range that split itself either goes on
	// serving it (the Cosmos SDK reads the children under the parent's
	// continuation) or fails with ErrFeedRangeGone.
	ReadChangeFeed(ctx context.Context, r FeedRange, continuation string, maxItems int) (ChangeFeedPage, error)
}

// FeedFromNow, passed to ReadChangeFeed as the continuation, reads nothing
// and returns an empty page whose continuation marks the present end of
// the range: reading from it yields the changes written after the call,
// and may yield some of those written up to FeedFromNowEarly before it
// (delivery is at least once: a reader copes with those). It costs no
// read of the history: the embedded store records the range's latest
// LSN, exactly; Cosmos records the time FeedFromNowEarly before the call
// and sends it with the first read from it (the SDK's StartFrom,
// If-Modified-Since: whole seconds, and compared with the service's
// clock, not the shop's).
const FeedFromNow = "now"

// FeedFromNowEarly bounds how long before the call a FeedFromNow
// position may start.
const FeedFromNowEarly = 5 * time.Second

// ErrFeedRangeGone is in the chain of the EUNAVAILABLE error of a
// ReadChangeFeed of a feed range that split (Cosmos answers 410 with
// substatus 1002): read the feed ranges again and go on in the children
// from the same continuation. Test with errors.Is.
var ErrFeedRangeGone = errors.New("the feed range split: read the feed ranges again")

// FeedRangeGone is the error of a change-feed read of r, which split.
func FeedRangeGone(r FeedRange) error {
	return goneError{domain.Errorf(domain.EUNAVAILABLE,
		"feed range %s split: read the feed ranges again and go on in its children from the same continuation", r)}
}

type goneError struct{ err *domain.Error }

func (g goneError) Error() string   { return g.err.Error() }
func (g goneError) Unwrap() []error { return []error{g.err, ErrFeedRangeGone} }

// Limits Cosmos imposes, enforced by both adapters.
const (
	MaxItemBytes     = 2 * 1024 * 1024   // an item over 2 MB is refused (413)
	MaxBatchOps      = 100               // a transactional batch holds at most 100 operations
	MaxBatchBytes    = 2 * 1024 * 1024   // and at most 2 MB in all (BatchSize; 413 on Cosmos)
	MaxPatchOps      = 10                // a patch holds at most 10 operations (400 on Cosmos)
	MaxIDBytes       = domain.MaxIDBytes // ids: 1..1023 bytes of UTF-8, none of / \ ? # " nor a control character (domain.ValidateID)
	MaxPartitionKey  = 2048              // bytes of a partition key value
	MaxQueryPageSize = 1000              // items of one query page
)

// DefaultPageSize is the page size of a query without a Limit, and of an
// API list requested without ?limit=.
const DefaultPageSize = 20

// WriteOptions carries optimistic concurrency: with IfMatch set the write
// only succeeds if the item's _etag still equals it (412 otherwise).
type WriteOptions struct {
	IfMatch string
}

// PatchOptions are a patch's preconditions, both optional and ANDed:
// IfMatch as in WriteOptions, and Condition, a filter predicate on the
// stored item (see Condition). Either failing is EPRECONDITION.
type PatchOptions struct {
	IfMatch   string
	Condition Condition
}

// ItemResponse is the result of a point operation.
type ItemResponse struct {
	// Item is the document as stored, with its system properties _etag and
	// _ts. Nil after Delete.
	Item []byte
	ETag string
	// NotModified says a ReadIfNoneMatch found the ETag it named: Item
	// is nil.
	NotModified bool
	// RequestCharge is the Request Units the call cost.
	RequestCharge float64
}

// Patch operations (the subset of Cosmos partial document update the port
// supports). Path is a JSON pointer such as "/categoryName" or "/items/0/name".
const (
	PatchSet       = "set"     // set a property, creating it if missing
	PatchReplace   = "replace" // set a property that must exist
	PatchAdd       = "add"     // add a property, or insert into an array
	PatchRemove    = "remove"  // remove a property or array element
	PatchIncrement = "incr"    // add a whole number (an int64) to a numeric property
)

// PatchOp is one operation of a partial document update. A nil Value of
// a set, replace or add writes JSON null: the property exists, null.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Batch operation kinds.
const (
	BatchCreate  = "create"
	BatchReplace = "replace"
	BatchUpsert  = "upsert"
	BatchDelete  = "delete"
	BatchPatch   = "patch"
)

// BatchOp is one operation of a transactional batch. ID is required for
// Replace, Delete and Patch; Item for Create, Replace and Upsert; Patch
// (the operations) for Patch only. Condition belongs to Patch only and
// means what PatchOptions.Condition does: when it does not hold the
// operation fails EPRECONDITION and, like a failed IfMatch, the batch
// commits nothing. With it a batch can take stock and record what took it
// in one transaction of one logical partition.
type BatchOp struct {
	Kind      string
	ID        string
	Item      []byte
	Patch     []PatchOp
	Condition Condition
	IfMatch   string
}

// BatchResponse is the outcome of a transactional batch.
type BatchResponse struct {
	Committed bool
	// Results has one entry per operation, in order.
	Results       []BatchResult
	RequestCharge float64
}

// CodeFailedDependency is BatchResult.Code of an operation that a failure
// elsewhere in its batch rolled back (Cosmos answers 424 for those).
const CodeFailedDependency = "failed_dependency"

// BatchResult is the outcome of one operation of a batch. Code is "" for an
// operation that succeeded, the domain code of the failure otherwise, and
// CodeFailedDependency for the operations a failure elsewhere rolled back.
type BatchResult struct {
	StatusCode int
	Code       string
	ETag       string
	Item       []byte
}

// Query filter operators: the two the shop needs (an equality, and the
// cart fan-out's ARRAY_CONTAINS on productIds).
const (
	OpEqual         = "="
	OpArrayContains = "ARRAY_CONTAINS"
)

// Filter is one condition of a query; the conditions are ANDed. Path is a
// top-level property name ("type", "productIds").
type Filter struct {
	Path  string
	Op    string
	Value any
}

// Query is a structured query: the adapters render it (parameterized SQL on
// Cosmos, never string interpolation of values). There is no free SQL so
// that both adapters agree on what a query means and costs.
type Query struct {
	// PartitionKey scopes the query to one logical partition. Empty means
	// cross-partition: every physical partition is asked (and charged).
	PartitionKey string
	Filters      []Filter
	// OrderBy is one top-level property; ties are broken by id, so it
	// needs a composite index (OrderBy, id) in the query's direction on
	// Cosmos, declared in the container's IndexingPolicy. It requires
	// PartitionKey: the Go SDK fetches no query plan and the gateway
	// refuses a cross-partition ORDER BY, so both adapters return EINVALID
	// for one. A client needing a cross-partition order pages the
	// unordered query to the end and sorts the items itself. An item
	// without the OrderBy property is returned too, before every value
	// ascending (after every one descending), as Cosmos's ORDER BY
	// returns it; the shop filters on a type whose documents always carry
	// the property.
	OrderBy string
	Desc    bool
	// Limit is the page size (1..MaxQueryPageSize; 0 means DefaultPageSize):
	// the most items a page holds. A cross-partition page may hold fewer,
	// none even, while more follow (Cosmos answers from one physical
	// partition at a time); only an empty QueryPage.Continuation ends a
	// query. The embedded store fills every page it can.
	Limit int
	// Select projects top-level properties; empty selects whole documents.
	Select []string
	// Continuation resumes after the previous page; "" starts at the top.
	// Opaque: pass back exactly what QueryPage returned.
	Continuation string
}

// QueryPage is one page of query results.
type QueryPage struct {
	// Items are the caller's to read, never to write: an adapter may
	// hand the same bytes to several callers (the embedded store's query
	// memo does). Decoding reads them; a caller that wants to change one
	// copies it first.
	Items [][]byte
	// Continuation is "" on the last page, and only there: a page
	// shorter than the limit is not the end (see Query.Limit).
	Continuation  string
	RequestCharge float64
	// CrossPartition is true when the query fanned out, and
	// PartitionsTouched says to how many physical partitions.
	CrossPartition    bool
	PartitionsTouched int
}

// FeedRange is a range of the partition-key hash space: one physical
// partition. Min is inclusive, Max exclusive, both hex strings as in Cosmos.
type FeedRange struct {
	Min string `json:"min"`
	Max string `json:"max"`
}

// String names the range, e.g. "00-3F" — the lease id of a processor.
func (r FeedRange) String() string { return r.Min + "-" + r.Max }

// Bounds compare as strings, as Cosmos's effective partition keys do
// (upper-case hex, "" the lowest); a Max of "FF" or "" is the end of the
// space, above every bound.

// Overlaps reports whether r and o share part of the hash space.
func (r FeedRange) Overlaps(o FeedRange) bool { return r.Min < o.end() && o.Min < r.end() }

// Contains reports whether o lies within r.
func (r FeedRange) Contains(o FeedRange) bool { return r.Min <= o.Min && o.end() <= r.end() }

// Intersect returns the part of the hash space r and o share; call it on
// ranges that overlap.
func (r FeedRange) Intersect(o FeedRange) FeedRange {
	out := FeedRange{Min: max(r.Min, o.Min), Max: r.Max}
	if o.end() <= r.end() {
		out.Max = o.Max
	}
	return out
}

func (r FeedRange) end() string {
	if r.Max == "" || r.Max == "FF" {
		return "\xff"
	}
	return r.Max
}

// ChangeFeedPage is one page of the change feed of one feed range.
type ChangeFeedPage struct {
	Items [][]byte
	// Continuation to pass to the next call; never "" after a first call.
	Continuation  string
	RequestCharge float64
	// Remaining estimates how many changed items are still ahead of
	// Continuation (the processor's lag): the range's latest log sequence
	// number minus the position reached, so writes since overwritten or
	// deleted make it an over-estimate; 0 at the end; -1 when the adapter
	// cannot tell.
	Remaining int64
}

// ContainerDef is a container's definition as data (see migrations).
type ContainerDef struct {
	ID               string `json:"id"`
	PartitionKeyPath string `json:"partitionKeyPath"`
	// DefaultTTL: nil = TTL off; -1 = on, items live until their own ttl;
	// n > 0 = items expire n seconds after their last write.
	DefaultTTL     *int           `json:"defaultTtl,omitempty"`
	IndexingPolicy IndexingPolicy `json:"indexingPolicy"`
	// UniqueKeys lists sets of paths unique within a logical partition.
	UniqueKeys [][]string `json:"uniqueKeys,omitempty"`
}

// IndexingPolicy mirrors Cosmos's: paths included and excluded from the
// index (an excluded property costs nothing to write) and the composite
// indexes ORDER BY over several properties needs.
type IndexingPolicy struct {
	IncludedPaths    []string          `json:"includedPaths"`
	ExcludedPaths    []string          `json:"excludedPaths"`
	CompositeIndexes [][]CompositePath `json:"compositeIndexes,omitempty"`
}

// CompositePath is one path of a composite index.
type CompositePath struct {
	Path  string `json:"path"`
	Order string `json:"order"` // "ascending" or "descending"
}
