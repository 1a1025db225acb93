FROM c WHERE c.available >= 3
