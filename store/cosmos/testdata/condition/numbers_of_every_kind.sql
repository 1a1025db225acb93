FROM c WHERE c.neg > -7 AND c.whole_float = 2 AND c.fraction < 0.25 AND c.tiny > 0.0000001 AND c.big < 18446744073709551615 AND c.decoded = 1000
