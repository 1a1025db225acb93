FROM c WHERE c.status = 'active' AND c.available >= 1
