FROM c WHERE c.sku = 'a\' OR 1=1 OR c.sku = \"b\\\u000a\u0000\u2028é'
