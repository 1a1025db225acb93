package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// child is the shop binary running as a separate process.
type child struct {
	cmd  *exec.Cmd
	base string
}

// startChild runs the binary on a free port over the data dir, with the
// extra settings (KEY=VALUE) given.
func startChild(t *testing.T, bin, dir string, extra ...string) *child {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(shopEnv(dir, extra...), "HOME="+dir, "PATH="+os.Getenv("PATH"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	base, _ := listeningURL(t, out)
	return &child{cmd: cmd, base: base}
}

// checkoutTry is one checkout a client sent: the key, and the order id
// when the answer was a 201 (empty when the answer never came).
type checkoutTry struct {
	user, key, orderID string
}

// TestCrashDuringBurstLosesNothing kills the shop with SIGKILL while users
// add to their carts and check out and an admin changes prices, restarts
// it on the same data, and checks what the shop promised: every order
// that got a 201 is there exactly once, a retried Idempotency-Key replays
// its order (never a second one), and the feed workers resume from their
// checkpoints until every cart line carries its product's latest price.
func TestCrashDuringBurstLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	const users = 6
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "shop")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	first := startChild(t, bin, dir)
	products := createCatalog(t, first.base, 4)

	var (
		mu      sync.Mutex
		tries   []checkoutTry
		placed  atomic.Int64
		stop    = make(chan struct{})
		clients sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for u := range users {
		clients.Add(1)
		go func() {
			defer clients.Done()
			user := fmt.Sprintf("buyer-%d", u)
			tok := testToken(t, user, false)
			rng := rand.New(rand.NewPCG(uint64(u), 1))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := products[rng.IntN(len(products))]
				if _, _, err := httpDo(client, "PUT", first.base+"/v1/cart/items/"+p, tok, map[string]int{"quantity": 1 + rng.IntN(3)}, nil); err != nil {
					return
				}
				if n%3 != 2 {
					continue
				}
				key := fmt.Sprintf("%s-%d", user, n)
				code, body, err := httpDo(client, "POST", first.base+"/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": key})
				try := checkoutTry{user: user, key: key}
				if err == nil && code == http.StatusCreated {
					var o struct{ ID string }
					_ = json.Unmarshal(body, &o)
					try.orderID = o.ID
					placed.Add(1)
				}
				mu.Lock()
				tries = append(tries, try)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	clients.Add(1)
	go func() {
		defer clients.Done()
		admin := testToken(t, "boss", true)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := products[i%len(products)]
			if _, _, err := httpDo(client, "PATCH", first.base+"/v1/products/"+p, admin, map[string]int{"priceCents": 600 + i},
				map[string]string{"Content-Type": "application/merge-patch+json"}); err != nil {
				return
			}
		}
	}()

	// Kill -9 mid-burst, once a few orders were placed and the feed
	// workers checkpointed at least once.
	admin := testToken(t, "boss", true)
	checkpointed := func() bool {
		var st struct {
			Processors []struct {
				Leases []struct{ LastCheckpoint *time.Time }
			}
		}
		code, b, err := httpDo(client, "GET", first.base+"/v1/admin/feeds", admin, nil, nil)
		if err != nil || code != http.StatusOK || json.Unmarshal(b, &st) != nil {
			return false
		}
		for _, p := range st.Processors {
			for _, l := range p.Leases {
				if l.LastCheckpoint != nil {
					return true
				}
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for (placed.Load() < 15 || !checkpointed()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(stop)
	clients.Wait()
	if placed.Load() == 0 {
		t.Fatal("no order was placed before the crash: the test proves nothing")
	}

	// The feed workers' checkpoints survived the kill: the leases the
	// restarted workers resume from hold continuations.
	resumable := leasesWithCheckpoint(t, dir)
	if resumable == 0 {
		t.Error("no lease holds a checkpoint after the kill")
	}

	second := startChild(t, bin, dir)
	// Every 201 is there, once, in the history; retrying its key replays it.
	for _, tr := range tries {
		tok := testToken(t, tr.user, false)
		code, body, err := httpDo(client, "POST", second.base+"/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": tr.key})
		if err != nil {
			t.Fatal(err)
		}
		if tr.orderID == "" {
			continue // its fate was unknown; the store check below counts it
		}
		var o struct{ ID string }
		_ = json.Unmarshal(body, &o)
		if code != http.StatusCreated || o.ID != tr.orderID {
			t.Errorf("retry of key %s after the crash = %d order %q, want a replay of order %s", tr.key, code, o.ID, tr.orderID)
		}
		mustDo(t, "GET", second.base+"/v1/orders/"+tr.orderID, tok, nil, http.StatusOK)
	}
	for u := range users {
		user := fmt.Sprintf("buyer-%d", u)
		var page struct{ Items []struct{ ID string } }
		_ = json.Unmarshal(mustDo(t, "GET", second.base+"/v1/orders?limit=100", testToken(t, user, false), nil, http.StatusOK), &page)
		seen := map[string]int{}
		for _, it := range page.Items {
			seen[it.ID]++
		}
		for _, tr := range tries {
			if tr.user == user && tr.orderID != "" && seen[tr.orderID] != 1 {
				t.Errorf("order %s of %s appears %d times in the history, want 1", tr.orderID, user, seen[tr.orderID])
			}
		}
	}

	// The feed workers resume from their checkpoints: every cart line ends
	// at its product's latest price.
	latest := map[string]int64{}
	for _, p := range products {
		var v struct{ PriceCents int64 }
		_ = json.Unmarshal(mustDo(t, "GET", second.base+"/v1/products/"+p, "", nil, http.StatusOK), &v)
		latest[p] = v.PriceCents
	}
	stale := func() string {
		for u := range users {
			var c struct {
				Items []struct {
					ProductID      string
					UnitPriceCents int64
				}
			}
			_ = json.Unmarshal(mustDo(t, "GET", second.base+"/v1/cart", testToken(t, fmt.Sprintf("buyer-%d", u), false), nil, http.StatusOK), &c)
			for _, l := range c.Items {
				if l.UnitPriceCents != latest[l.ProductID] {
					return fmt.Sprintf("buyer-%d's line of %s at %d, latest %d", u, l.ProductID, l.UnitPriceCents, latest[l.ProductID])
				}
			}
		}
		return ""
	}
	for end := time.Now().Add(15 * time.Second); ; {
		s := stale()
		if s == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("15 s after the restart the carts are stale: %s", s)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Each Idempotency-Key produced at most one order: read the orders as
	// stored, after a clean stop.
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.cmd.Wait(); err != nil {
		t.Fatalf("clean stop after the restart: %v", err)
	}
	st, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orders := 0
	for u := range users {
		page, err := st.Container(store.OrdersContainer).Query(context.Background(), store.Query{PartitionKey: fmt.Sprintf("buyer-%d", u),
			Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}}, Limit: store.MaxQueryPageSize})
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]int{}
		for _, it := range page.Items {
			o, err := repo.Decode[struct{ IdempotencyKey string }](it)
			if err != nil {
				t.Fatal(err)
			}
			byKey[o.IdempotencyKey]++
			orders++
		}
		for k, n := range byKey {
			if n != 1 {
				t.Errorf("key %s produced %d orders", k, n)
			}
		}
	}
	t.Logf("%d checkouts tried, %d got a 201 before the kill, %d orders stored after restart and retries; %d leases checkpointed at the kill",
		len(tries), placed.Load(), orders, resumable)
}

// leasesWithCheckpoint opens the stopped shop's store and counts the
// leases that hold a continuation.
func leasesWithCheckpoint(t *testing.T, dir string) int {
	t.Helper()
	st, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.Container(store.LeasesContainer).Query(context.Background(), store.Query{Limit: store.MaxQueryPageSize})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range page.Items {
		l, err := repo.Decode[struct {
			Continuation string `json:"continuation"`
		}](it)
		if err != nil {
			t.Fatal(err)
		}
		if l.Continuation != "" {
			n++
		}
	}
	return n
}
