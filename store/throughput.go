package store

// PartitionThroughput is what one physical partition of a container was
// provisioned and what it has spent: the figures to read a hot partition
// by. Cosmos splits a container's provisioned Request Units per second
// evenly over its physical partitions, and throttles a partition that
// spends its share (429) while the others still have theirs.
type PartitionThroughput struct {
	Container string
	// Partition is the physical partition's feed range.
	Partition FeedRange
	// Provisioned is the partition's share of the container's RU/s; 0
	// means unlimited.
	Provisioned float64
	// LastSecond is the Request Units charged in the last whole second.
	LastSecond float64
	// RequestCharge is the Request Units charged since the store opened,
	// and Throttled the calls refused over the budget (429) since then.
	RequestCharge float64
	Throttled     int64
}

// ThroughputReporter is a store that enforces provisioned throughput
// itself and reports it per physical partition: the embedded store
// (embedded.Options.Throughput). On Cosmos the same figures are the
// account's metrics in Azure Monitor, by partition key range, which this
// port does not read.
type ThroughputReporter interface {
	// Throughput reports every physical partition of every container,
	// ordered by container name and then by range.
	Throughput() []PartitionThroughput
}
