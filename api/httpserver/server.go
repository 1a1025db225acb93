// Package httpserver is the HTTP server side of the shop: the server that
// serves the API (its timeouts), the listeners (a busy port names the
// setting that picks another), the bound on the connections held open
// (Limiter), and the listeners of their own for /metrics and Go's
// profiles. It knows no store and no route: cmd/shop gives it the
// handler (api.NewServer) and the settings, and this package bounds what
// any client, slow, hostile or merely keeping connections open, can hold.
package httpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// New is the shop's http.Server: its timeouts bound what a slow or
// hostile client can hold (a client sending headers one byte at a time
// is cut off after 5 s), and LimitConns bounds the connections. Requests
// run on a context that outlives ctx, so a cancelled ctx lets them
// finish within the shutdown grace.
func New(ctx context.Context, addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       DefaultIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// DefaultIdleTimeout is how long a keep-alive connection may wait for
// its next request. The connections held idle are the new ones per second
// times this wait, so 30 s holds a quarter of what the former 120 s held;
// a shopper's next click comes within seconds and still finds its
// connection, and a client back after 30 s dials again, one round trip.
const DefaultIdleTimeout = 30 * time.Second

// IsLoopback reports whether addr is a loopback address; an unspecified
// one (every interface) is not.
func IsLoopback(addr net.Addr) bool {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DisplayAddr is addr as a browser can open it: an unspecified address
// (every interface) is shown as localhost with its port.
func DisplayAddr(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		return fmt.Sprintf("localhost:%d", ta.Port)
	}
	return a.String()
}

// Listen binds addr, or says which setting picks another (setting, and
// an example of it) when it cannot.
func Listen(addr, setting, example string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: pick another address with %s, e.g. %s", err, setting, example)
	}
	return ln, nil
}

// ServeMetrics serves h at /metrics on ln, a listener of its own, until
// stop.
func ServeMetrics(ln net.Listener, h http.Handler, stdout io.Writer) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(stdout, "shop: metrics on http://%s/metrics\n", ln.Addr())
	return func() { _ = srv.Close() }
}

// ServePprof serves Go's profiles on ln, a listener apart from the API
// so that no route of the shop exposes them, until stop.
func ServePprof(ln net.Listener, stdout io.Writer) (stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(stdout, "shop: profiles on http://%s/debug/pprof/\n", ln.Addr())
	return func() { _ = srv.Close() }
}
