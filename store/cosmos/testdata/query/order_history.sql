SELECT c.id, c.createdAt, c.status, c.itemCount, c.totalCents FROM c WHERE c.type = @p0 ORDER BY c.createdAt DESC, c.id DESC
-- @p0 = "order"
