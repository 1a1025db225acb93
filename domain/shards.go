package domain

import (
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// A split stock: the distributed counter. One stock document lives in one
// logical partition, so on one physical partition, which Cosmos serves at
// most 10,000 RU/s: the ceiling of one product's sales (docs/scale.md).
// An admin splits a hot product's stock into N shards (SetShards): shard
// 0 is the home document (StockIDOf(sku) in the product's partition, as
// for every stock), shard k ≥ 1 a TypeStockShard document with the same
// id in partition ShardKey(product, k) ("<k>#<product>"), so the shards
// hash to different physical partitions and the product's sales spread
// over them. "How many are left" becomes the sum of the shards (the
// inventory feed keeps the product's availability copy from it).
//
// The rules that keep the flash-sale guarantee across shards:
//
//   - A take is still one conditional patch in a batch with its
//     reservation, in ONE shard: a line is never split across shards
//     (its reservation is one document, and its release one batch).
//   - The order line records the stock's shard count at the claim
//     (OrderLine.StockShards), so every attempt of the same take starts
//     on the same shard (StartShard). The claim reads that shard alone;
//     the count it takes from the home document, read at most once a
//     second per instance (store/writes), so the home partition is not
//     read by every checkout.
//   - A take short on its shard moves on to one that has enough (a take
//     whose order saw the stock unsplit only gathers units, below), and
//     first leaves a marker (a reservation in state ReservationMoved,
//     MovedTo the next shard) where it was short. A retry or a second
//     worker follows the markers, so an order's line holds units in at
//     most one shard, and a release follows them to that shard and gives
//     its units back there, exactly once. A release that finds no
//     reservation at the end of the chain leaves a released one there,
//     which ends the chain: no take of an ended order can follow it.
//   - A buyer is refused only when the shards together had fewer units
//     than the line when read (store/repo Inventory.Reserve reads every
//     shard before refusing, and gathers a line's units into one shard
//     when they are scattered).
//   - Units move between shards only by transfer (Transfer): a batch
//     in the sending shard takes the units and writes the transfer, a
//     batch in the receiving shard writes its receipt and adds them. The
//     receipt's id makes the second batch happen once; the inventory
//     feed completes every transfer whose sender wrote it and died.
//     Merging shards back (fewer active shards) only retires shards:
//     takes stop starting there, and the feed drains whatever arrives in
//     a retired shard (a late release) into the home shard.
const (
	TypeStockShard = "stockShard"
	TypeTransfer   = "transfer"

	// MaxStockShards bounds a stock's shards. A sale spends about 18 RU
	// on the partition of the shard it takes from (the claim's read of
	// that shard, the take, the commit: docs/performance.md), so one shard
	// on a physical partition of its own serves about 550 sales a second
	// at Cosmos's 10,000 RU/s, and 64 about 35,000 (docs/performance.md,
	// docs/scale.md).
	MaxStockShards = 64

	// ReservationMoved is the marker a take leaves on a shard that was
	// short for it, naming the shard it went on to (MovedTo).
	ReservationMoved = "moved"

	// Transfer states: sent (the units left the sender), done (the
	// receiver has them); a receipt is written received.
	TransferSent     = "sent"
	TransferReceived = "received"
	TransferDone     = "done"

	// shardSep separates a product id from a shard number in a shard's
	// partition key: ValidateID refuses it in an id, so no product's own
	// partition key is ever a shard's.
	shardSep = "#"
)

// ShardKey is the partition key of shard k of productID's stock: the
// product's id for the home shard 0, "<k>#<productID>" otherwise. The
// shard number comes first, as the status buckets' does
// (StatusDayKey): the embedded store places keys by FNV-1a over hash
// ranges, where keys that differ only in their last characters crowd into
// one range; Cosmos hashes the whole key, and either order spreads there.
func ShardKey(productID string, k int) string {
	if k == 0 {
		return productID
	}
	return strconv.Itoa(k) + shardSep + productID
}

// ShardOf splits a partition key of the inventory container into the
// product's id and the shard: ShardOf(ShardKey(p, k)) is p, k.
func ShardOf(key string) (productID string, k int) {
	n, p, ok := strings.Cut(key, shardSep)
	if !ok {
		return key, 0
	}
	k, err := strconv.Atoi(n)
	if err != nil {
		return key, 0
	}
	return p, k
}

// StartShard is the shard the take of orderID's line of the variant sku
// of productID starts on, of a stock split into shards: a hash of the
// order and the line, so buyers spread evenly, and every attempt of one
// take starts in the same place.
func StartShard(orderID, productID, sku string, shards int) int {
	if shards <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(orderID))
	h.Write([]byte{0})
	h.Write([]byte(LineLabel(productID, sku)))
	return int(h.Sum32() % uint32(shards))
}

// NewStockShard is shard k ≥ 1 of the stock of the variant sku of
// productID, with no units.
func NewStockShard(productID, sku string, k int, now time.Time) Stock {
	s := NewStock(ShardKey(productID, k), sku, 0, now)
	s.Type, s.Shard = TypeStockShard, k
	return s
}

// Active is how many shards takes start on; Made how many shard
// documents exist. Both are 1 for a stock never split. Read them on the
// home document.
func (s Stock) Active() int { return max(1, s.Shards) }
func (s Stock) Made() int   { return max(1, s.Shards, s.ShardsMade) }

// Product is the id of the product s is (a shard of) the stock of.
func (s Stock) Product() string { p, _ := ShardOf(s.ProductID); return p }

// Product is the id of the product r took units of.
func (r Reservation) Product() string { p, _ := ShardOf(r.ProductID); return p }

// Moved is the marker of a take that was short on shard k (r's) and went
// on to shard next.
func (r Reservation) Moved(next int, now time.Time) Reservation {
	r.State, r.Quantity, r.CreatedAt = ReservationMoved, 0, now.UTC()
	r.MovedTo = &next
	return r
}

// At is r placed on shard k of its product's stock.
func (r Reservation) At(k int) Reservation {
	r.ProductID, r.Shard = ShardKey(r.Product(), k), k
	return r
}

// Transfer is units moving from one shard of a stock to another: the
// sender's document (state sent, then done) is written in one batch with
// the take of the units from the sending shard, the receipt (same id,
// state received) in one batch with their return to the receiving shard.
type Transfer struct {
	Meta
	// ProductID is the partition key of the shard the document is in.
	ProductID string    `json:"productId"`
	SKU       string    `json:"sku,omitempty"`
	From      int       `json:"from"`
	To        int       `json:"to"`
	Units     int64     `json:"units"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"createdAt"`
}

// NewTransfer is the sender's document of units moving from shard from to
// shard to of the stock of the variant sku of productID.
func NewTransfer(productID, sku string, from, to int, units int64, now time.Time) Transfer {
	return Transfer{
		Meta:      Meta{ID: "xfer-" + RandomSuffix(), Type: TypeTransfer, SchemaVersion: SchemaVersion},
		ProductID: ShardKey(productID, from), SKU: sku, From: from, To: to, Units: units,
		State: TransferSent, CreatedAt: now.UTC(),
	}
}

// Product is the id of the product whose stock t moves units of.
func (t Transfer) Product() string { p, _ := ShardOf(t.ProductID); return p }

// StockLayout is a stock's shards as one read of each saw them.
type StockLayout struct {
	ProductID string `json:"productId"`
	SKU       string `json:"sku,omitempty"`
	// Shards is how many shards takes start on, ShardsMade how many exist
	// (the retired ones drain into shard 0).
	Shards     int `json:"shards"`
	ShardsMade int `json:"shardsMade"`
	// Available is the sum of Units, the units of each shard.
	Available int64   `json:"available"`
	Units     []int64 `json:"units"`
}

// Total is the stock the shards add up to, as the availability copy reads
// it: their units summed (and apart, the units in flight between them),
// and their versions summed, which only ever grow
// (every write of a shard moves its version, and shards are never
// deleted), so a copy taken from a later sum never loses to an earlier
// one.
func Total(home Stock, shards []Stock) Stock {
	t := home
	t.Shard = 0
	for _, s := range shards {
		t.Available += s.Available
		t.Sending += s.Sending
		t.Version += s.Version
	}
	return t
}
