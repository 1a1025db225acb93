SELECT * FROM c WHERE c.type = @p0 AND ARRAY_CONTAINS(c.terms, @p1) ORDER BY c.rank ASC, c.id ASC
-- @p0 = "searchEntry"
-- @p1 = "cup"
