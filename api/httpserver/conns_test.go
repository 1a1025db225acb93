package httpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// limitedShop serves the shop's API with the shop's server (New) on
// 127.0.0.1, its connections bounded by limits as `shop serve` bounds
// them. What the
// server logs (accept errors among it) is in the returned log.
func limitedShop(t testing.TB, limits Limits) (addr string, lim *Limiter, serverLog *lockedBuffer) {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := New(context.Background(), "127.0.0.1:0", api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), nil, nil), Store: st, Secret: []byte(testJWTSecret)}))
	serverLog = &lockedBuffer{}
	srv.ErrorLog = log.New(serverLog, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim = LimitConns(ln, limits, RefusalResponse(), srv)
	go srv.Serve(lim)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), lim, serverLog
}

// testJWTSecret signs the tokens of the test shops.
const testJWTSecret = "httpserver-test-secret-of-32-bytes-at-least"

// lockedBuffer is a buffer the server's goroutines may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dialerFrom dials from ip: on Linux all of 127.0.0.0/8 is loopback, so
// 127.0.0.2 is another client address to the server than 127.0.0.1.
func dialerFrom(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
}

func skipUnlessLinux(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2 and up, which only Linux routes to loopback by default")
	}
}

const healthRequest = "GET /healthz HTTP/1.1\r\nHost: shop\r\n\r\n"

// ask sends GET /healthz on c and reads the answer; the connection stays
// open, kept alive.
func ask(c net.Conn) (*http.Response, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, healthRequest); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

// closedByServer reports whether the server has closed c: a read ends
// with EOF (or a reset) instead of waiting.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// waitFor waits until cond holds, the server's hooks having run.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}

// TestConnLimiter: over a bound, the connection idle the longest in it
// is closed to make room; when none is idle the new connection is
// answered 503 with Retry-After and Connection: close; other addresses
// are served throughout.
func TestConnLimiter(t *testing.T) {
	skipUnlessLinux(t)
	for _, tc := range []struct {
		name   string
		limits Limits
		// held are the addresses of the connections open before the
		// new one, in order; idle says whether they sent a request (and
		// so wait idle for the next) or nothing yet (busy being read).
		held []string
		idle bool
		// from is the address of the new connection; closed is the index
		// of the held connection it closes (-1: none).
		from   string
		status int
		closed int
	}{
		{"AddressBoundClosesItsLongestIdle", Limits{PerAddr: 2}, []string{"127.0.0.1", "127.0.0.1"}, true, "127.0.0.1", 200, 0},
		{"AddressBoundLeavesOtherAddresses", Limits{PerAddr: 2}, []string{"127.0.0.1", "127.0.0.1"}, true, "127.0.0.2", 200, -1},
		{"AddressBoundAllBusyIs503", Limits{PerAddr: 2}, []string{"127.0.0.1", "127.0.0.1"}, false, "127.0.0.1", 503, -1},
		{"TotalClosesTheLongestIdleOfAnyAddress", Limits{Total: 2}, []string{"127.0.0.2", "127.0.0.1"}, true, "127.0.0.3", 200, 0},
		{"TotalAllBusyIs503", Limits{Total: 2}, []string{"127.0.0.2", "127.0.0.1"}, false, "127.0.0.3", 503, -1},
		{"UnderTheBoundsNothingIsClosed", Limits{Total: 3, PerAddr: 3}, []string{"127.0.0.1", "127.0.0.1"}, true, "127.0.0.1", 200, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, lim, serverLog := limitedShop(t, tc.limits)
			var held []net.Conn
			for i, ip := range tc.held {
				c, err := dialerFrom(ip).Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				held = append(held, c)
				if tc.idle {
					if resp, err := ask(c); err != nil || resp.StatusCode != 200 {
						t.Fatalf("held connection %d: %v, %v; want 200", i, resp, err)
					}
					// The order they went idle in is the order to close them in.
					waitFor(t, "the connection to be idle", func() bool { return lim.Stats().Idle == i+1 })
				}
			}
			waitFor(t, "the held connections to be accepted", func() bool { return lim.Stats().Open == len(tc.held) })

			c, err := dialerFrom(tc.from).Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			resp, err := ask(c)
			if err != nil {
				t.Fatalf("new connection from %s: %v", tc.from, err)
			}
			if got := resp.StatusCode; got != tc.status {
				t.Fatalf("new connection from %s: status %d, want %d", tc.from, got, tc.status)
			}
			if tc.status == 503 {
				if !resp.Close || resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Content-Type") != "application/problem+json" {
					t.Errorf("refusal: Close %v, Retry-After %q, Content-Type %q; want Connection: close, Retry-After: 1, application/problem+json",
						resp.Close, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
				}
				if !closedByServer(c) {
					t.Error("the refused connection stayed open")
				}
			}
			wantEvicted := int64(0)
			if tc.closed >= 0 {
				wantEvicted = 1
			}
			if got := lim.Stats().Evicted; got != wantEvicted {
				t.Errorf("%d connections closed to make room, want %d", got, wantEvicted)
			}
			// The closed one reads EOF; every other is still served.
			for i, h := range held {
				if i == tc.closed {
					if !closedByServer(h) {
						t.Errorf("held connection %d (%s) is open, want it closed", i, tc.held[i])
					}
				} else if resp, err := ask(h); err != nil || resp.StatusCode != 200 {
					t.Errorf("held connection %d (%s): %v, %v; want it open and served", i, tc.held[i], resp, err)
				}
			}
			if s := serverLog.String(); s != "" {
				t.Errorf("the server logged:\n%s", s)
			}
		})
	}
}

// TestRefusalIsTheAPIsProblem: a refused connection's 503 is the API's
// problem document for an unavailable shop, so a client reads it as it
// reads any other 503.
func TestRefusalIsTheAPIsProblem(t *testing.T) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(RefusalResponse())), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Type, "https://shop.example/problems/unavailable"; got != want {
		t.Errorf("type = %q, want %q", got, want)
	}
	if p.Status != 503 || resp.StatusCode != 503 || !resp.Close {
		t.Errorf("status %d (body %d), Close %v; want 503 with Connection: close", resp.StatusCode, p.Status, resp.Close)
	}
}

// lowerFDLimit lowers the soft open-file limit of the test process to at
// most n for the test, and returns the limit in force.
func lowerFDLimit(t *testing.T, n uint64) uint64 {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if uint64(lim.Cur) <= n {
		return uint64(lim.Cur)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	return n
}

// TestIdleConnectionsFromOneAddressLeaveRoomForOthers: one address
// opening thousands of idle keep-alive connections, several times its
// bound, does not run the server out of descriptors, and another client
// is still served, as is the same address on a connection of its own.
func TestIdleConnectionsFromOneAddressLeaveRoomForOthers(t *testing.T) {
	skipUnlessLinux(t)
	const perAddr, total = 200, 400
	// This process holds both ends of every connection. Its open-file
	// limit is set so that the client's connections fit (n), and a server
	// holding at most total of them fits beside them, but a server
	// holding every one (2n descriptors) does not: that server fails its
	// accepts with EMFILE, as one on a shared machine would.
	fds := lowerFDLimit(t, 4096)
	const spare = 128 // the test binary's own descriptors, and the store's
	n := int(fds-spare) * 2 / 3
	if n+total+maxLingering+spare > int(fds) || n < 3*perAddr {
		t.Skipf("an open-file limit of %d leaves no room for the test", fds)
	}
	addr, lim, serverLog := limitedShop(t, Limits{Total: total, PerAddr: perAddr})

	// n idle connections from 127.0.0.1, each having asked once and been
	// answered, held open by the client for the whole test.
	var (
		mu       sync.Mutex
		held     []net.Conn
		statuses = map[string]int{}
		dialErr  error
	)
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	const workers = 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				c, err := dialerFrom("127.0.0.1").Dial("tcp", addr)
				mu.Lock()
				if err != nil {
					if dialErr == nil {
						dialErr = fmt.Errorf("connection %d of %d: %w", i, n, err)
					}
					mu.Unlock()
					return
				}
				held = append(held, c)
				mu.Unlock()
				outcome := "closed without an answer"
				if resp, err := ask(c); err == nil {
					outcome = resp.Status
				}
				mu.Lock()
				statuses[outcome]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d connections from 127.0.0.1 held by the client: %v; server: %+v", len(held), statuses, lim.Stats())
	// A server without bounds takes every connection: the process runs
	// out of descriptors, the client's dials fail and so do the server's
	// accepts.
	if dialErr != nil {
		t.Errorf("the client could not dial: %v", dialErr)
	}
	if s := serverLog.String(); strings.Contains(s, "Accept error") {
		t.Errorf("the server failed to accept:\n%.600s", s)
	}
	one := &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}
	if got := lim.openFrom(one); got > perAddr {
		t.Errorf("the server holds %d connections from 127.0.0.1, want at most %d", got, perAddr)
	}
	if got := lim.Stats().Open; got > total {
		t.Errorf("the server holds %d connections, want at most %d", got, total)
	}

	// Another client, on fresh connections from another address.
	other := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext:       dialerFrom("127.0.0.2").DialContext,
		DisableKeepAlives: true,
	}}
	for i := range 5 {
		resp, err := other.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("another client from 127.0.0.2, request %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("another client from 127.0.0.2, request %d: status %d, want 200", i, resp.StatusCode)
		}
	}
	// The same address, on a connection of its own: one of its idle
	// ones makes room.
	c, err := dialerFrom("127.0.0.1").Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if resp, err := ask(c); err != nil || resp.StatusCode != 200 {
		t.Errorf("a new connection from 127.0.0.1: %v, %v; want 200", resp, err)
	}
}

// BenchmarkIdleConnectionMemory reports what one idle keep-alive
// connection costs the server in heap and stacks (the client's side, a
// bare net.Conn, is a few hundred bytes of it), the figure behind
// maxConnsCap: go test -run '^$' -bench IdleConnectionMemory -benchtime 1x ./api/httpserver
func BenchmarkIdleConnectionMemory(b *testing.B) {
	const conns = 2000
	addr, lim, _ := limitedShop(b, Limits{})
	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	for b.Loop() {
		before := inUse()
		held := make([]net.Conn, 0, conns)
		for range conns {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			held = append(held, c)
			if _, err := ask(c); err != nil {
				b.Fatal(err)
			}
		}
		for lim.Stats().Idle < conns {
			time.Sleep(time.Millisecond)
		}
		b.ReportMetric(float64(inUse()-before)/conns, "B/idle-conn")
		for _, c := range held {
			c.Close()
		}
		for lim.Stats().Open > 0 {
			time.Sleep(time.Millisecond)
		}
	}
}
