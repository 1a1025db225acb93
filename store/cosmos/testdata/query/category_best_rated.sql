SELECT * FROM c WHERE c.type = @p0 ORDER BY c.ratingScore DESC, c.id DESC
-- @p0 = "productSummary"
