package embedded

import "math"

// Request Units on the embedded store are an ESTIMATE, built from the
// figures Microsoft publishes for Azure Cosmos DB for NoSQL
// (learn.microsoft.com/azure/cosmos-db/request-units and
// .../optimize-cost-reads-writes):
//
//   - A point read of a 1 KB item costs 1 RU; a 100 KB item about 10 RU.
//     Estimate: 1 RU + 0.09 RU per KB beyond the first.
//   - A write (create, replace, upsert, patch) of a 1 KB item with the
//     default indexing policy costs about 5 RU, a 100 KB item about 50 RU,
//     and every indexed property adds to it (excluding paths from the index
//     lowers the charge). Estimate: 5 RU + 0.45 RU per KB beyond the
//     first, plus 0.1 RU per indexed scalar property.
//   - A delete costs about what writing the item did; the estimate leaves
//     out the index term (5 RU + 0.45 RU per extra KB).
//   - A query costs about 2.3 RU of fixed work per physical partition it
//     runs on (so a cross-partition query pays it once per partition
//     touched), plus per document loaded and per KB returned. Estimate:
//     2.3 RU per partition + 0.05 RU per document loaded + 0.05 RU per KB
//     returned. The documents loaded are counted as the query reads them:
//     a page served by an order index (a composite index, querywalk.go)
//     loads what its walk reads, about the page plus one, however large
//     the partition; an ORDER BY no index serves loads every document its
//     filters match, to sort them; a query without ORDER BY loads its page
//     (the filter's matches stream in order until the page is full).
//   - A change-feed page costs what reading its items does: the point-read
//     estimate per item, and 1 RU for a page with nothing new.
//   - A request that finds nothing (404), conflicts (409), fails its
//     If-Match (412) or is refused as too large (413) still costs about 1 RU.
//   - A transactional batch costs the sum of its operations.
//
// Sizes are rounded up to whole KB; every charge is rounded to 2 decimals.
// The real figures depend on the account, consistency level and document
// shape: measure against Cosmos before sizing throughput on these.
const (
	readBaseRU        = 1.0
	readPerExtraKBRU  = 0.09
	writeBaseRU       = 5.0
	writePerExtraKBRU = 0.45
	writePerIndexedRU = 0.1
	queryPartitionRU  = 2.3
	queryPerDocRU     = 0.05
	queryPerKBRU      = 0.05
	failedRU          = 1.0
	emptyFeedPageRU   = 1.0
)

// kb is a size in whole KB, at least 1.
func kb(bytes int) float64 {
	return math.Max(1, math.Ceil(float64(bytes)/1024))
}

func round2(ru float64) float64 { return math.Round(ru*100) / 100 }

// readCharge estimates a point read of an item of n bytes.
func readCharge(n int) float64 {
	return round2(readBaseRU + readPerExtraKBRU*(kb(n)-1))
}

// writeCharge estimates writing an item of n bytes with indexed indexed
// scalar properties.
func writeCharge(n, indexed int) float64 {
	return round2(writeBaseRU + writePerExtraKBRU*(kb(n)-1) + writePerIndexedRU*float64(indexed))
}

// deleteCharge estimates deleting an item of n bytes.
func deleteCharge(n int) float64 {
	return round2(writeBaseRU + writePerExtraKBRU*(kb(n)-1))
}

// queryCharge estimates a query page that ran on partitions physical
// partitions, loaded docs documents and returned bytes bytes.
func queryCharge(partitions, docs, bytes int) float64 {
	ru := queryPartitionRU*float64(partitions) + queryPerDocRU*float64(docs)
	if bytes > 0 {
		ru += queryPerKBRU * kb(bytes)
	}
	return round2(ru)
}

// feedCharge estimates a change-feed page holding items of these sizes.
func feedCharge(sizes []int) float64 {
	if len(sizes) == 0 {
		return emptyFeedPageRU
	}
	ru := 0.0
	for _, n := range sizes {
		ru += readBaseRU + readPerExtraKBRU*(kb(n)-1)
	}
	return round2(ru)
}
