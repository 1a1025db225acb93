package feedworkers

// WithReplay lets the handler tests apply a batch as the processor applies
// one that may have been applied before.
var WithReplay = withReplay
