SELECT c.id, c.status, c.totalCents FROM c WHERE c.type = @p0 AND c.status = @p1 AND ARRAY_CONTAINS(c.productIds, @p2)
-- @p0 = "order"
-- @p1 = "placed"
-- @p2 = "p9"
