FROM c WHERE c["value"] > 0
