SELECT c.id, c.n, c.kind FROM c
