package httpserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestServerTimeoutsAreSet: the server `shop serve` runs bounds what a slow or
// hostile client can hold.
func TestServerTimeoutsAreSet(t *testing.T) {
	srv := New(context.Background(), ":0", http.NotFoundHandler())
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		{"ReadHeaderTimeout", srv.ReadHeaderTimeout, 5 * time.Second},
		{"ReadTimeout", srv.ReadTimeout, 15 * time.Second},
		{"WriteTimeout", srv.WriteTimeout, 30 * time.Second},
		{"IdleTimeout", srv.IdleTimeout, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
			}
		})
	}
	if got, want := srv.MaxHeaderBytes, 64<<10; got != want {
		t.Errorf("MaxHeaderBytes = %d, want %d", got, want)
	}
}

// slowShop serves the shop with the shop's server (New), its header timeout
// shortened from 5 s to 300 ms so the test does not wait 5 s.
func slowShop(t *testing.T) string {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := New(t.Context(), "127.0.0.1:0", api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), nil, nil), Store: st, Secret: []byte(testJWTSecret)}))
	srv.ReadHeaderTimeout = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestSlowHeadersAreCutOff: a client sending its headers one byte at a
// time (slowloris) is disconnected by the header timeout before it can
// finish them.
func TestSlowHeadersAreCutOff(t *testing.T) {
	addr := slowShop(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "GET /healthz HTTP/1.1\r\nHost: shop\r\nX-Slow: " + strings.Repeat("a", 200) + "\r\n\r\n"
	closed := make(chan struct{})
	go func() {
		// The server answers a timed-out header read by closing (after
		// an optional 408): the read ends.
		io.Copy(io.Discard, conn)
		close(closed)
	}()
	sent := 0
	for ; sent < len(head); sent++ {
		select {
		case <-closed:
		default:
			if _, err := conn.Write([]byte{head[sent]}); err == nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
		}
		break
	}
	if sent == len(head) {
		t.Fatalf("the server read all %d header bytes sent one at a time; want it to cut the client off", sent)
	}
	t.Logf("cut off after %d of %d header bytes", sent, len(head))
}

// countingReader is an endless body that counts what was read of it.
type countingReader struct{ n atomic.Int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	if c.n.Add(int64(len(p))) > 64<<20 {
		return 0, errors.New("the server read 64 MB of the body")
	}
	return len(p), nil
}

// TestHugeAndDeepBodiesAreRefusedEarly: a body far over the limit is
// refused with 413 after the first 64 KB, not read to its end, and a
// deeply nested one is a 400 before it is decoded.
func TestHugeAndDeepBodiesAreRefusedEarly(t *testing.T) {
	addr := slowShop(t)
	tok, err := api.IssueToken([]byte(testJWTSecret), "ann", "User ann", "ann@example.com", false, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("HugeIs413", func(t *testing.T) {
		body := &countingReader{}
		req, _ := http.NewRequest("PUT", "http://"+addr+"/v1/cart/items/p1", io.MultiReader(strings.NewReader(`{"quantity":1,"x":"`), body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := resp.StatusCode, http.StatusRequestEntityTooLarge; got != want {
			t.Errorf("status = %d, want %d", got, want)
		}
		// The server stops reading after 64 KB, but what the client manages
		// to write before it sees the answer also fills the loopback
		// socket buffers (several MB under load), so the bound is loose:
		// a server that read the body to its end would take all 64 MB.
		if read := body.n.Load(); read > 32<<20 {
			t.Errorf("the client had to send %d bytes; want the server to stop reading soon after 64 KB", read)
		}
	})
	t.Run("DeepIs400", func(t *testing.T) {
		deep := `{"quantity":` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + "}"
		req, _ := http.NewRequest("PUT", "http://"+addr+"/v1/cart/items/p1", strings.NewReader(deep))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := resp.StatusCode, http.StatusBadRequest; got != want {
			t.Errorf("status = %d, want %d", got, want)
		}
	})
}
