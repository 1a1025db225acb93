package api

import (
	"math"
	"net/http"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// handleThroughput reports each container's physical partitions: the
// share of the provisioned throughput, what each spent in the last
// second and in all, and the calls each refused (429). A hot partition
// shows as one whose last second nears its share while its throttled
// count grows.
func handleThroughput(tr store.ThroughputReporter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if tr == nil {
			writeProblem(w, r, domain.Errorf(domain.EUNAVAILABLE,
				"this store does not report throughput per partition (on Cosmos, read the account's metrics by partition key range in Azure Monitor)"))
			return
		}
		encode(w, http.StatusOK, viewThroughput(tr.Throughput()))
	}
}

// throughputView is the body of GET /v1/admin/throughput (openapi.yaml's
// ThroughputStatus).
type throughputView struct {
	Containers []containerThroughputView `json:"containers"`
}

// containerThroughputView is one container: its partitions and their sums.
type containerThroughputView struct {
	Container     string                    `json:"container"`
	Provisioned   float64                   `json:"provisioned"`
	LastSecond    float64                   `json:"lastSecond"`
	RequestCharge float64                   `json:"requestCharge"`
	Throttled     int64                     `json:"throttled"`
	Partitions    []partitionThroughputView `json:"partitions"`
}

type partitionThroughputView struct {
	Partition     string  `json:"partition"`
	Provisioned   float64 `json:"provisioned"`
	LastSecond    float64 `json:"lastSecond"`
	RequestCharge float64 `json:"requestCharge"`
	Throttled     int64   `json:"throttled"`
}

// viewThroughput groups the partitions, which come ordered by container,
// under their containers.
func viewThroughput(ps []store.PartitionThroughput) throughputView {
	v := throughputView{Containers: []containerThroughputView{}}
	for _, p := range ps {
		if n := len(v.Containers); n == 0 || v.Containers[n-1].Container != p.Container {
			v.Containers = append(v.Containers, containerThroughputView{Container: p.Container})
		}
		c := &v.Containers[len(v.Containers)-1]
		c.Provisioned = round2(c.Provisioned + p.Provisioned)
		c.LastSecond = round2(c.LastSecond + p.LastSecond)
		c.RequestCharge = round2(c.RequestCharge + p.RequestCharge)
		c.Throttled += p.Throttled
		c.Partitions = append(c.Partitions, partitionThroughputView{Partition: p.Partition.String(), Provisioned: p.Provisioned,
			LastSecond: p.LastSecond, RequestCharge: p.RequestCharge, Throttled: p.Throttled})
	}
	return v
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
