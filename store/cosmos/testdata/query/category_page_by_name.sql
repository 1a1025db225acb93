SELECT * FROM c WHERE c.type = @p0 ORDER BY c.name ASC, c.id ASC
-- @p0 = "productSummary"
