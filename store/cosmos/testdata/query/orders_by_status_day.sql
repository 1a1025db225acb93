SELECT * FROM c WHERE c.type = @p0 ORDER BY c.createdAt DESC, c.id DESC
-- @p0 = "orderSummary"
