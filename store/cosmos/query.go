package cosmos

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// identifier is what a property name in a query may look like. Names
// cannot be query parameters in Cosmos SQL, so they are checked against
// this before they are written into the text; values never are.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reserved words of Cosmos NoSQL that cannot follow "c." and are written
// c["name"] instead.
var reserved = map[string]bool{
	"and": true, "array": true, "as": true, "asc": true, "between": true, "by": true,
	"case": true, "cast": true, "convert": true, "cross": true, "desc": true,
	"distinct": true, "else": true, "end": true, "escape": true, "exists": true,
	"false": true, "for": true, "from": true, "group": true, "having": true,
	"in": true, "inner": true, "insert": true, "into": true, "is": true,
	"join": true, "left": true, "like": true, "limit": true, "not": true,
	"null": true, "offset": true, "on": true, "or": true, "order": true,
	"outer": true, "over": true, "right": true, "select": true, "set": true,
	"then": true, "top": true, "true": true, "udf": true, "undefined": true,
	"update": true, "value": true, "when": true, "where": true, "with": true,
}

// property renders c.name, or c["name"] for a reserved word, after
// checking name is an identifier.
func property(name string) (string, error) {
	if !identifier.MatchString(name) {
		return "", domain.Errorf(domain.EINVALID, "query: %q is not a property name", name)
	}
	if reserved[strings.ToLower(name)] {
		return `c["` + name + `"]`, nil
	}
	return "c." + name, nil
}

// sqlQuery is a rendered query: text with @p0, @p1 ... and their values.
type sqlQuery struct {
	Text   string
	Params []azcosmos.QueryParameter
}

// render turns the structured query into parameterized SQL
// (query-parameterize: values only as parameters, never in the text, so
// no value can change what the query means, and the plan is reusable).
func render(q store.Query) (sqlQuery, error) {
	var b strings.Builder
	var out sqlQuery

	b.WriteString("SELECT ")
	if len(q.Select) == 0 {
		b.WriteString("*")
	}
	sel := q.Select
	if len(sel) > 0 && !slices.Contains(sel, "id") {
		// A projection always carries the id, as on the embedded store.
		sel = append([]string{"id"}, sel...)
	}
	for i, name := range sel {
		p, err := property(name)
		if err != nil {
			return sqlQuery{}, err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p)
	}
	b.WriteString(" FROM c")

	for i, f := range q.Filters {
		p, err := property(f.Path)
		if err != nil {
			return sqlQuery{}, err
		}
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		param := fmt.Sprintf("@p%d", i)
		switch f.Op {
		case store.OpEqual:
			fmt.Fprintf(&b, "%s = %s", p, param)
		case store.OpArrayContains:
			fmt.Fprintf(&b, "ARRAY_CONTAINS(%s, %s)", p, param)
		default:
			return sqlQuery{}, domain.Errorf(domain.EINVALID, "query: unknown operator %q", f.Op)
		}
		out.Params = append(out.Params, azcosmos.QueryParameter{Name: param, Value: f.Value})
	}

	if q.OrderBy != "" {
		// The SDK fetches no query plan, and the gateway refuses a
		// cross-partition ORDER BY without one: refused here before any
		// request (and any charge), as the port says.
		if q.PartitionKey == "" {
			return sqlQuery{}, domain.Errorf(domain.EINVALID, "query: order by %q needs a partition key: a cross-partition query cannot be ordered; query without order by and sort in the client", q.OrderBy)
		}
		p, err := property(q.OrderBy)
		if err != nil {
			return sqlQuery{}, err
		}
		dir := "ASC"
		if q.Desc {
			dir = "DESC"
		}
		fmt.Fprintf(&b, " ORDER BY %s %s", p, dir)
		// Ties are broken by id, as the port promises; a two-property
		// ORDER BY needs a composite index (index-composite), which the
		// migrations declare for each query the shop runs.
		if q.OrderBy != "id" {
			fmt.Fprintf(&b, ", c.id %s", dir)
		}
	}
	out.Text = b.String()
	return out, nil
}

// Query runs one page of a structured query. With a partition key it is
// a single-partition query (query-avoid-cross-partition); without, it
// fans out and the page says so.
func (c *Container) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	if c.err != nil {
		return store.QueryPage{}, mapError("container "+c.name, c.err)
	}
	limit := q.Limit
	if limit == 0 {
		limit = store.DefaultPageSize
	}
	if limit < 0 || limit > store.MaxQueryPageSize {
		return store.QueryPage{}, domain.Errorf(domain.EINVALID, "query: page size %d not in 1..%d", q.Limit, store.MaxQueryPageSize)
	}
	sq, err := render(q)
	if err != nil {
		return store.QueryPage{}, err
	}
	opts := &azcosmos.QueryOptions{
		QueryParameters: sq.Params,
		PageSizeHint:    int32(limit),
	}
	scope := c.queryScope(q.PartitionKey, sq)
	if q.Continuation != "" {
		// Cosmos's token, exactly as the previous page returned it.
		cont, err := unseal(scope, q.Continuation)
		if err != nil {
			return store.QueryPage{}, err
		}
		opts.ContinuationToken = &cont
	}
	pk := azcosmos.NewPartitionKey()
	cross := q.PartitionKey == ""
	if cross {
		yes := true
		opts.EnableCrossPartitionQuery = &yes
	} else {
		if err := checkPK(q.PartitionKey); err != nil {
			return store.QueryPage{}, err
		}
		pk = azcosmos.NewPartitionKeyString(q.PartitionKey)
	}

	page := store.QueryPage{CrossPartition: cross, PartitionsTouched: 1}
	pager := c.c.NewQueryItemsPager(sq.Text, pk, opts)
	// A cross-partition page through the gateway can come back empty with
	// a continuation; fetch on until there is something or nothing left.
	for pager.More() {
		r, err := pager.NextPage(ctx)
		if err != nil {
			page.RequestCharge += failedCharge(err)
			return page, mapError(c.op("query", ""), err)
		}
		page.RequestCharge += responseCharge(r.Response)
		page.Continuation = ""
		if r.ContinuationToken != nil {
			page.Continuation = seal(scope, *r.ContinuationToken)
		}
		for _, raw := range r.Items {
			item, err := fromCosmos(raw, "")
			if err != nil {
				return page, err
			}
			page.Items = append(page.Items, item)
		}
		if len(page.Items) > 0 {
			break
		}
	}
	if cross {
		// Best effort: a fan-out asks every physical partition.
		if ranges, err := c.c.ReadFeedRanges(ctx, nil); err == nil {
			page.PartitionsTouched = len(ranges)
		}
	}
	return page, nil
}
