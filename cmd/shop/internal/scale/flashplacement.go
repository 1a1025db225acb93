package scale

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// Placement is where the shards of one product land among the physical
// partitions of inventory on a fresh embedded store: the shop's own
// hashing, found out by writing one document under each shard's key to a
// scratch store of as many partitions and reading which partition each
// write charged (Store.Throughput).
type Placement struct {
	Shards int `json:"shards"`
	// Partition is each shard's physical partition (feed range), shard 0
	// (the home document) first.
	Partition []string `json:"partition"`
}

// Distinct is how many partitions hold a shard.
func (p Placement) Distinct() int {
	seen := map[string]bool{}
	for _, r := range p.Partition {
		seen[r] = true
	}
	return len(seen)
}

// Crowding is the shards each partition holds, most first, and how many
// share the home document's partition (home included).
func (p Placement) Crowding() (held []int, home int) {
	by := map[string]int{}
	for _, r := range p.Partition {
		by[r]++
	}
	for _, n := range by {
		held = append(held, n)
	}
	slices.SortFunc(held, func(a, b int) int { return cmp.Compare(b, a) })
	if len(p.Partition) > 0 {
		home = by[p.Partition[0]]
	}
	return held, home
}

// String is the crowding: the shards each partition holds, most first,
// and how many share the home document's partition, "7·4·2·2·1 (home's:
// 4)".
func (p Placement) String() string {
	held, home := p.Crowding()
	parts := make([]string, len(held))
	for i, n := range held {
		parts[i] = strconv.Itoa(n)
	}
	return fmt.Sprintf("%s (home's: %d)", strings.Join(parts, "·"), home)
}

// placeShards finds where each of product's shards 0..n−1 lands on an
// embedded store of partitions physical partitions.
func placeShards(ctx context.Context, partitions int, product string, n int) (Placement, error) {
	pl := Placement{Shards: n}
	dir, err := os.MkdirTemp("", "shop-placement-")
	if err != nil {
		return pl, err
	}
	defer os.RemoveAll(dir)
	es, err := embedded.Open(filepath.Join(dir, "placement.db"), embedded.Options{PhysicalPartitions: partitions, NoSync: true})
	if err != nil {
		return pl, err
	}
	defer es.Close()
	if err := migrations.Apply(ctx, es, io.Discard); err != nil {
		return pl, err
	}
	c := es.Container(store.InventoryContainer)
	charged := func() map[string]float64 {
		out := map[string]float64{}
		for _, t := range es.Throughput() {
			if t.Container == store.InventoryContainer {
				out[t.Partition.String()] = t.RequestCharge
			}
		}
		return out
	}
	for k := range n {
		key := domain.ShardKey(product, k)
		doc, err := json.Marshal(map[string]string{"id": "placement", "type": "placement", "productId": key})
		if err != nil {
			return pl, err
		}
		before := charged()
		if _, err := c.Create(ctx, key, doc); err != nil {
			return pl, err
		}
		var at []string
		for r, ru := range charged() {
			if ru > before[r] {
				at = append(at, r)
			}
		}
		if len(at) != 1 {
			return pl, fmt.Errorf("the write under %q charged %d partitions, want 1", key, len(at))
		}
		pl.Partition = append(pl.Partition, at[0])
	}
	return pl, nil
}
