SELECT * FROM c WHERE c.type = @p0 AND ARRAY_CONTAINS(c.productIds, @p1)
-- @p0 = "cart"
-- @p1 = "p1"
