package httpserver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain"
)

// Limits bounds the connections the server holds open. Each open
// connection costs a file descriptor, a goroutine and its buffers, idle
// or not: without a bound, one client holding thousands of idle
// keep-alive connections runs the process out of descriptors, and from
// then on every accept fails (EMFILE) and every other client waits.
type Limits struct {
	// Total bounds every connection of the listener (0: no bound). Below
	// the process's descriptor limit (DefaultMaxConns), so that accepting
	// never fails for want of a descriptor.
	Total int
	// PerAddr bounds the connections of one client address (0: no
	// bound), so that one client cannot take the whole Total.
	PerAddr int
}

// DefaultMaxConnsPerAddr leaves one client address room for what shop
// bench opens from 127.0.0.1 (up to 2,000 vegeta workers, 32 wrk
// connections) and for a few hundred users behind one NAT, whose
// browsers open at most 6 connections each; a proxy in front needs more
// (docs/reliability.md, "Connections and what a proxy in front adds").
const DefaultMaxConnsPerAddr = 4096

// fdReserve is the part of the open-file limit kept from accepted
// connections: the store's file, the listeners, the refusals lingering
// (maxLingering), the telemetry exporter's connections and the runtime's
// own descriptors.
const fdReserve = 256

// maxConnsCap caps the default total where the open-file limit is huge
// (a container's is often 1,048,576): an idle connection costs the
// server about 20 KB of heap and stack (conns_test.go:
// BenchmarkIdleConnectionMemory), so 16,384 of them hold some 330 MB;
// past that, memory runs out before descriptors do.
const maxConnsCap = 16384

// DefaultMaxConns is the total bound for an open-file limit of fds: the
// limit less fdReserve, so that an accept never fails for want of a
// descriptor, and half of that with Cosmos, where each request in flight
// may hold a connection of its own to the gateway (HTTP/1.1 carries one
// request at a time). 0 (no bound) where the limit is unknown.
func DefaultMaxConns(fds uint64, cosmos bool) int {
	if fds == 0 {
		return 0
	}
	n := fds / 2
	if fds > 2*fdReserve {
		n = fds - fdReserve
	}
	if cosmos {
		n /= 2
	}
	return int(max(1, min(n, maxConnsCap)))
}

// Limiter is a net.Listener that holds the connections it accepts
// within limits. A connection over a bound first makes room by closing
// the connection idle the longest, of that address for PerAddr, of any
// address for Total: an idle keep-alive connection is the cheapest to
// lose (its client dials again, as it does after the idle timeout), so
// a client that merely keeps connections open cannot shut anyone out,
// however many addresses it has; refusing past the total instead would
// let any such client do it. Only when every connection in the bound is
// busy is the new one refused, with a 503 (refuse); a busy connection
// is bounded in time by the server's timeouts (New). The server tells
// which are idle through its ConnState hook (LimitConns sets it).
type Limiter struct {
	net.Listener
	limits Limits
	// refusal is the raw response a refused connection gets.
	refusal []byte
	// lingering holds a slot per refused connection still being closed
	// gracefully (writeRefusal), so that refusals cannot pile up.
	lingering chan struct{}

	refused, evicted atomic.Int64

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]*addrConns
	idle   idleList // idle the longest first, linked by links[allIdle]
}

// addrConns is what the limiter knows of one client address.
type addrConns struct {
	open int
	idle idleList // idle the longest first, linked by links[addrIdle]
}

// The two idle lists a connection can be on, each through a link of its
// own: every idle one (Limiter.idle) and its address's (addrConns.idle).
const (
	allIdle = iota
	addrIdle
)

// idleList is a list of idle connections, the longest idle first, linked
// through the connections themselves (limitedConn.links): a connection
// goes idle and busy again between any two requests, and a list that
// allocated an element each time would cost every request two.
type idleList struct {
	head, tail *limitedConn
	len        int
	link       int // which of a connection's links this list uses
}

// idleLink is a connection's place in one idle list.
type idleLink struct {
	prev, next *limitedConn
	in         bool
}

func (l *idleList) pushBack(c *limitedConn) {
	k := &c.links[l.link]
	k.prev, k.next, k.in = l.tail, nil, true
	if l.tail != nil {
		l.tail.links[l.link].next = c
	} else {
		l.head = c
	}
	l.tail = c
	l.len++
}

func (l *idleList) remove(c *limitedConn) {
	k := &c.links[l.link]
	if !k.in {
		return
	}
	if k.prev != nil {
		k.prev.links[l.link].next = k.next
	} else {
		l.head = k.next
	}
	if k.next != nil {
		k.next.links[l.link].prev = k.prev
	} else {
		l.tail = k.prev
	}
	*k = idleLink{}
	l.len--
}

// A refused connection gets its 503 and then up to refusalLinger for its
// client to read it and close, and no more than maxLingering refusals
// linger at once: past that, a refused connection is closed at once.
const (
	refusalLinger = time.Second
	maxLingering  = 64
)

// LimitConns bounds the connections srv serves from ln to limits, and
// hooks srv's ConnState to see which are idle: serve srv on the Limiter
// it returns (srv.Serve(l)), not on ln. refusal is the response of a
// refused connection (RefusalResponse).
func LimitConns(ln net.Listener, limits Limits, refusal []byte, srv *http.Server) *Limiter {
	l := &Limiter{
		Listener:  ln,
		limits:    limits,
		refusal:   refusal,
		lingering: make(chan struct{}, maxLingering),
		byAddr:    map[netip.Addr]*addrConns{},
		idle:      idleList{link: allIdle},
	}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.connState(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
	return l
}

// Accept returns the next connection within the bounds. An error of the
// listener is returned as it is: http.Server retries a temporary one
// (EMFILE among them) after a pause that doubles from 5 ms to 1 s, so
// the accept loop neither spins nor stops.
func (l *Limiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, evict := l.admit(c)
		for _, e := range evict {
			l.evicted.Add(1)
			_ = e.Conn.Close()
		}
		if lc != nil {
			return lc, nil
		}
		l.refuse(c)
	}
}

// admit counts c in if it fits, closing idle connections to make room:
// it returns the counted connection (nil if c is refused) and the
// connections to close, already counted out.
func (l *Limiter) admit(c net.Conn) (*limitedConn, []*limitedConn) {
	key := addrKey(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.byAddr[key]
	if a == nil {
		a = &addrConns{idle: idleList{link: addrIdle}}
		l.byAddr[key] = a
	}
	var evict []*limitedConn
	if l.limits.PerAddr > 0 && a.open >= l.limits.PerAddr {
		if c := a.idle.head; c != nil {
			evict = append(evict, l.forgetLocked(c))
		}
	}
	if l.limits.Total > 0 && l.open >= l.limits.Total {
		if c := l.idle.head; c != nil {
			evict = append(evict, l.forgetLocked(c))
		}
	}
	if (l.limits.PerAddr > 0 && a.open >= l.limits.PerAddr) || (l.limits.Total > 0 && l.open >= l.limits.Total) {
		if a.open == 0 {
			delete(l.byAddr, key)
		}
		return nil, evict
	}
	// An eviction above may have closed the address's last connection
	// and dropped its entry.
	l.byAddr[key] = a
	a.open++
	l.open++
	return &limitedConn{Conn: c, l: l, key: key, addr: a}, evict
}

// forgetLocked counts c out: it is closed, or about to be.
func (l *Limiter) forgetLocked(c *limitedConn) *limitedConn {
	if c.closed {
		return c
	}
	c.closed = true
	l.unidleLocked(c)
	c.addr.open--
	l.open--
	if c.addr.open == 0 {
		delete(l.byAddr, c.key)
	}
	return c
}

func (l *Limiter) unidleLocked(c *limitedConn) {
	l.idle.remove(c)
	c.addr.idle.remove(c)
}

// connState keeps the idle lists: a connection is idle between two
// requests (StateIdle) and nothing else is ever closed to make room. One
// that is closed by then is left out.
func (l *Limiter) connState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return
	}
	if s == http.StateIdle {
		if !c.links[allIdle].in {
			l.idle.pushBack(c)
			c.addr.idle.pushBack(c)
		}
		return
	}
	l.unidleLocked(c)
}

// refuse answers a connection over a bound whose connections are all
// busy: its 503 (with Retry-After and Connection: close) is written
// before the request is read, then the server's half is closed and what
// the client sends is read away until it closes too, so that the close
// does not reset the connection and take the answer with it. Past
// maxLingering refusals in progress, or when the write fails, the
// connection is simply closed: the client sees it reset.
func (l *Limiter) refuse(c net.Conn) {
	l.refused.Add(1)
	select {
	case l.lingering <- struct{}{}:
		go func() {
			defer func() { <-l.lingering }()
			writeRefusal(c, l.refusal)
		}()
	default:
		_ = c.Close()
	}
}

func writeRefusal(c net.Conn, resp []byte) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refusalLinger))
	if _, err := c.Write(resp); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.CopyN(io.Discard, c, 64<<10)
}

// ConnStats is what the limiter holds and has done: the connections
// open and idle now, and the running totals of refused and evicted ones
// (what /metrics reports, telemetry.ConnGauge).
type ConnStats struct {
	Open, Idle       int
	Refused, Evicted int64
}

// Stats is what l holds now and has done so far.
func (l *Limiter) Stats() ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ConnStats{Open: l.open, Idle: l.idle.len, Refused: l.refused.Load(), Evicted: l.evicted.Load()}
}

// openFrom is how many connections of the address of a are open.
func (l *Limiter) openFrom(a net.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.byAddr[addrKey(a)]; c != nil {
		return c.open
	}
	return 0
}

// addrKey is the client address the bound counts by: the IP without its
// port (one client opens many ports), an IPv4-mapped IPv6 address as the
// IPv4 one, and an IPv6 address by its /64, the block one host or site
// is usually given, as the rate limiter counts it
// (httprate.CanonicalizeIP in api/middleware.go).
func addrKey(a net.Addr) netip.Addr {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip := ta.AddrPort().Addr().Unmap()
	if ip.Is6() {
		return netip.PrefixFrom(ip, 64).Masked().Addr()
	}
	return ip
}

// limitedConn is a connection the limiter counts until it is closed.
type limitedConn struct {
	net.Conn
	l    *Limiter
	key  netip.Addr
	addr *addrConns
	// Guarded by l.mu.
	closed bool
	links  [2]idleLink // its places in the idle lists (allIdle, addrIdle)
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.forgetLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// CloseWrite and ReadFrom keep what the server gets from a *net.TCPConn:
// a graceful close after an error answer (CloseWrite) and sendfile or
// splice for bodies read from files (ReadFrom).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(c.Conn, r)
}

// RefusalResponse is the raw HTTP/1.1 answer of a refused connection:
// the API's 503 problem with its Retry-After, and Connection: close.
// A 503 rather than a bare close, so that a client (a browser, a proxy)
// can tell the shop is full from a shop that is down.
func RefusalResponse() []byte {
	rec := &recordedResponse{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	api.ProblemHandler(domain.Errorf(domain.EUNAVAILABLE,
		"too many connections: close idle ones, then retry")).ServeHTTP(rec, req)
	resp := http.Response{
		StatusCode:    rec.status,
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Close:         true,
	}
	var b bytes.Buffer
	_ = resp.Write(&b)
	return b.Bytes()
}

// recordedResponse keeps what a handler wrote.
type recordedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recordedResponse) Header() http.Header { return r.header }

func (r *recordedResponse) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recordedResponse) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
