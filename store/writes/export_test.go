package writes

// ReserveConcurrency is reserveConcurrency, for the tests of what a
// failing checkout can hold.
const ReserveConcurrency = reserveConcurrency
