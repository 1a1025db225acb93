FROM c WHERE c.a = 1 AND c.b != 2 AND c.c < 3 AND c.d <= 4 AND c.e > 5 AND c.f >= 6
