SELECT c.id, c["value"] FROM c WHERE c["value"] = @p0 ORDER BY c["order"] ASC, c.id ASC
-- @p0 = 3
