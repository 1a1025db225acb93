package backfill

// KindTypes lists the document types the backfill knows.
func KindTypes() map[string]bool {
	out := map[string]bool{}
	for t := range kinds {
		out[t] = true
	}
	return out
}
