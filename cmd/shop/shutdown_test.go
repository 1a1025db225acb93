package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// TestGracefulShutdownUnderLoad cancels run's context (what SIGTERM does
// in main) while 20 requests are in flight, their bodies still arriving:
// /readyz must turn 503 first, the 20 must finish with 2xx, run must
// return within the grace period, and the store must be closed (a second
// open of the file succeeds at once).
func TestGracefulShutdownUnderLoad(t *testing.T) {
	const inFlight = 20
	const grace = 10 * time.Second
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"shop"}, envOf(shopEnv(dir, "SHOP_SHUTDOWN_GRACE="+grace.String(), "SHOP_SHUTDOWN_DRAIN=1s")...), pw)
		pw.Close()
	}()
	base, _ := listeningURL(t, pr)
	ids := createCatalog(t, base, 1)

	// Slow clients: each request's headers and the start of its body are
	// sent, the rest is held back, so its handler is inside decode when
	// the shutdown begins.
	type result struct {
		code int
		err  error
	}
	results := make(chan result, inFlight)
	bodies := make([]*io.PipeWriter, inFlight)
	var started sync.WaitGroup
	for i := range inFlight {
		br, bw := io.Pipe()
		bodies[i] = bw
		started.Add(1)
		go func() {
			req, _ := http.NewRequest("PUT", base+"/v1/cart/items/"+ids[0], br)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testToken(t, fmt.Sprintf("slow-%02d", i), false))
			var once sync.Once
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				WroteHeaders: func() { once.Do(started.Done) },
			}))
			resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
			if err != nil {
				once.Do(started.Done)
				results <- result{err: err}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results <- result{code: resp.StatusCode}
		}()
		go io.WriteString(bw, `{"quantity":`)
	}
	started.Wait()
	// The server accepts connections in the order they arrive: once a
	// request on a 21st connection is answered, the 20 were accepted, and
	// their requests are in flight.
	resp, err := (&http.Client{Transport: &http.Transport{}}).Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	cancel()
	stoppedAt := time.Now()

	// Readiness goes first: a fresh connection sees 503 while the 20 are
	// still in flight.
	sawNotReady := false
	for !sawNotReady && time.Since(stoppedAt) < grace {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz after SIGTERM: %v (the listener closed before readiness said 503)", err)
		}
		resp.Body.Close()
		sawNotReady = resp.StatusCode == http.StatusServiceUnavailable
	}
	if !sawNotReady {
		t.Fatal("/readyz never answered 503 after SIGTERM")
	}

	for _, bw := range bodies {
		go func() {
			io.WriteString(bw, `2}`)
			bw.Close()
		}()
	}
	for range inFlight {
		r := <-results
		if r.err != nil || r.code < 200 || r.code > 299 {
			t.Errorf("in-flight request: status %d, err %v; want 2xx", r.code, r.err)
		}
	}

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(grace + 5*time.Second):
		t.Fatalf("run still running %v after SIGTERM, grace is %v", time.Since(stoppedAt), grace)
	}

	// The store was closed: bbolt's file lock is free, so this open does
	// not wait; and the 20 cart writes are in it.
	st, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatalf("reopen the store: %v", err)
	}
	defer st.Close()
	// The feed workers checkpointed and released their leases, so another
	// instance takes them at once instead of waiting for them to expire.
	page, err := st.Container("leases").Query(context.Background(), store.Query{Limit: store.MaxQueryPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) == 0 {
		t.Error("no leases: the feed workers never ran")
	}
	for _, it := range page.Items {
		l, err := repo.Decode[struct {
			ID    string `json:"id"`
			Owner string `json:"owner"`
		}](it)
		if err != nil || l.Owner != "" {
			t.Errorf("lease %s still owned by %q after shutdown (err %v)", l.ID, l.Owner, err)
		}
	}
	for i := range inFlight {
		r, err := st.Container("carts").Read(context.Background(), fmt.Sprintf("slow-%02d", i), fmt.Sprintf("slow-%02d", i))
		if err != nil {
			t.Errorf("cart of slow-%02d: %v", i, err)
			continue
		}
		if !strings.Contains(string(r.Item), `"quantity":2`) {
			t.Errorf("cart of slow-%02d has no line of quantity 2: %s", i, r.Item)
		}
	}
}
