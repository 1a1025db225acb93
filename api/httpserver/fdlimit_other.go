//go:build !unix

package httpserver

// FDLimit is 0 where there is no RLIMIT_NOFILE: the total bound of
// connections is then off unless SHOP_MAX_CONNS sets it.
func FDLimit() uint64 { return 0 }
