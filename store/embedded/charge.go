package embedded

import "math"

// Request Units on the embedded store are an ESTIMATE, calibrated against
// the figures Microsoft publishes for Azure Cosmos DB for NoSQL. The table
// of those figures, each beside the estimate for the same operation and
// the page it comes from, is in docs/cosmos.md ("Request Units on the
// embedded store"); charge_sources_test.go holds every estimate within 25%
// of its figure and writes that table.
//
//   - A point read of a 1 KB item costs 1 RU, a 100 KB item 10 RU
//     (optimize-cost-reads-writes). Estimate: 1 RU + 0.09 RU per KB beyond
//     the first.
//   - A write of a 1 KB item with indexing off costs 5 RU, of a 100 KB item
//     50 RU (key-value-store-cost), and every index term it writes adds to
//     that: the creates of model-partition-example (5.71 RU for a user of 2
//     terms to 8.76 RU for a post of 7) and of the .NET tutorial (11.43 and
//     14.29 RU for families of 15 and 21 terms) fit 0.45 RU a term.
//     Estimate: 5 RU + 0.45 RU per KB beyond the first + 0.45 RU per index
//     term written. A term is a scalar at its path under the container's
//     indexing policy (index.go, indexterms.go): an excluded path makes none.
//   - An overwrite (replace, upsert of an existing item, patch) pays the
//     same base, and for the index only the terms that changed: each term
//     of the old version the new one drops, each term of the new version
//     the old one lacked. The only published figures with a replace in
//     them, model-partition-example's stored procedures (read a post,
//     replace it with one counter changed, create a comment or a like:
//     15.27 and 14.67 RU), fit this within 2%. A patch is billed as the
//     write it makes (partial-document-update-faq: "Users should not
//     expect a significant reduction in RU").
//   - A delete: 5 RU + 0.45 RU per KB beyond the first (a write of the
//     item with indexing off; no figure with its index terms is published).
//   - A query costs 2.3 RU of fixed work per physical partition it runs on
//     (each has its own index, so a cross-partition query pays it once per
//     partition: troubleshoot-query-performance), plus 0.065 RU per
//     document loaded and 0.05 RU per KB returned: an index-served query
//     for one 6.5 KB document costs 2.98 RU there, a scan of 60,951
//     documents 4,059.95 RU. The documents loaded are counted as the query
//     reads them: a page served by an order index (a composite index,
//     querywalk.go) loads what its walk reads, about the page plus one,
//     however large the partition; an ORDER BY no index serves loads every
//     document its filters match, to sort them; a query without ORDER BY
//     loads its page (the filter's matches stream in order until the page
//     is full). The store simulates 4 physical partitions by default
//     (Options.PhysicalPartitions), what a container of more than 150 GB
//     or 30,000 RU/s has (one holds up to 50 GB and 10,000 RU/s); a small
//     real container has one, so its cross-partition queries pay the
//     2.3 RU once, not 4 times.
//   - A change-feed page costs what reading its items does: the point-read
//     estimate per item, and 1 RU for a page with nothing new. The one
//     published figure, "around 10 RUs per item" to copy posts through the
//     change feed (the model-partition-example page), is the feed read plus the
//     write of the copy (8.76 RU and up): about 1 RU per item read.
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
	indexTermRU       = 0.45
	queryPartitionRU  = 2.3
	queryPerDocRU     = 0.065
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

// writeCharge estimates writing an item of n bytes that adds or removes
// terms index terms: all of its terms for a create, the changed ones for
// an overwrite (changedTerms).
func writeCharge(n, terms int) float64 {
	return round2(writeBaseRU + writePerExtraKBRU*(kb(n)-1) + indexTermRU*float64(terms))
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
