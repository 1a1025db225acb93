package writes

import "time"

// ReserveConcurrency is reserveConcurrency, for the tests of what a
// failing checkout can hold.
const ReserveConcurrency = reserveConcurrency

// SetBound shortens how long w's checkouts carry their orders on.
func SetBound(w *Writes, d time.Duration) { w.bound = d }
