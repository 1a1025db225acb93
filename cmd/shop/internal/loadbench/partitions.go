package loadbench

import (
	"context"
	"fmt"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// maxPartitionThroughput is the most RU/s one physical partition of
// Cosmos serves (and shop serve accepts per partition).
const maxPartitionThroughput = 10_000

// partitionUsage is what one physical partition spent and refused during
// a run.
type partitionUsage struct {
	Container string `json:"container"`
	Partition string `json:"partition"`
	// Provisioned is its share of the container's RU/s.
	Provisioned float64 `json:"provisioned"`
	// RUPerSecond is the Request Units charged over the run's seconds,
	// and Throttled the calls it refused over its budget (429).
	RUPerSecond float64 `json:"ruPerSecond"`
	Throttled   int64   `json:"throttled"`
}

// throughputSnapshot is GET /v1/admin/throughput at one moment: the
// running totals of each container's partitions.
type throughputSnapshot struct {
	at         time.Time
	containers []containerTotals
}

type containerTotals struct {
	Container  string            `json:"container"`
	Partitions []partitionTotals `json:"partitions"`
}

type partitionTotals struct {
	Partition     string  `json:"partition"`
	Provisioned   float64 `json:"provisioned"`
	RequestCharge float64 `json:"requestCharge"`
	Throttled     int64   `json:"throttled"`
}

// throughput reads the shop's partitions' running totals.
func (c benchClient) throughput(ctx context.Context) (throughputSnapshot, error) {
	tok, err := c.adminToken(ctx)
	if err != nil {
		return throughputSnapshot{}, err
	}
	r, err := call(ctx, func() (*client.ThroughputStatusResponse, error) {
		return c.api.ThroughputStatusWithResponse(ctx, client.Bearer(tok))
	})
	if err != nil {
		return throughputSnapshot{}, fmt.Errorf("throughput: %w", err)
	}
	snap := throughputSnapshot{at: time.Now()}
	for _, ct := range r.JSON200.Containers {
		totals := containerTotals{Container: ct.Container}
		for _, p := range ct.Partitions {
			totals.Partitions = append(totals.Partitions, partitionTotals{
				Partition: p.Partition, Provisioned: float64(p.Provisioned), RequestCharge: float64(p.RequestCharge), Throttled: int64(p.Throttled)})
		}
		snap.containers = append(snap.containers, totals)
	}
	return snap, nil
}

// partitionsDuring is what each partition spent and refused between two
// snapshots, per second of the time between them; the partitions that
// did nothing are left out. A partition that split in between has no
// earlier figures: its children count from zero.
func partitionsDuring(before, after throughputSnapshot) []partitionUsage {
	type key struct{ container, partition string }
	type totals struct {
		charge    float64
		throttled int64
	}
	was := map[key]totals{}
	for _, c := range before.containers {
		for _, p := range c.Partitions {
			was[key{c.Container, p.Partition}] = totals{p.RequestCharge, p.Throttled}
		}
	}
	seconds := after.at.Sub(before.at).Seconds()
	var out []partitionUsage
	for _, c := range after.containers {
		for _, p := range c.Partitions {
			w := was[key{c.Container, p.Partition}]
			charge, throttled := p.RequestCharge-w.charge, p.Throttled-w.throttled
			if charge <= 0 && throttled == 0 {
				continue
			}
			u := partitionUsage{Container: c.Container, Partition: p.Partition, Provisioned: p.Provisioned, Throttled: throttled}
			if seconds > 0 {
				u.RUPerSecond = report.Round2(charge / seconds)
			}
			out = append(out, u)
		}
	}
	return out
}
