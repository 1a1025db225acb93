package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/faults"
)

// TestCartIsLinearizable: a few clients share ONE user's cart, setting,
// adding to (two tabs' "Add to cart" both count, up to 99) and removing
// lines, reading the cart and checking out (fresh keys; one in five with
// a card that declines) at once, on a store that throttles or fails some
// of its calls and a payment provider that fails some of its own. Every
// operation's call and return time, input and output are recorded, and
// porcupine checks that the history is linearizable against a sequential
// model whose state is the cart's lines, the number of orders and the
// total charged. A 503 is ambiguous (the request may or may not have
// taken effect), so the model lets it do either. After the clients, an
// audit with faults off and the feed caught up reads the cart, the order
// history and the summary. On Illegal the visualization is written to the
// test's temporary directory and its path printed.
func TestCartIsLinearizable(t *testing.T) {
	histories, clients, opsPerClient := 2, 4, 50
	if longRun() {
		histories = 40
	}
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), &faults.Config{Seed: 7, Disabled: true,
		Rules: []faults.Rule{{Throttle: 0.01, Unavailable: 0.01}}, RetryAfter: time.Millisecond})
	s.payFaults = paymentFaults(0.05, 7)
	s.pay.InjectFaults(s.payFaults)
	products := s.catalog(3)
	prices := map[string]int64{}
	for _, p := range products {
		prices[p] = s.product(p).PriceCents
	}
	model := cartModel(prices)
	dir := t.ArtifactDir()
	ops, ambiguous := 0, 0
	for h := range histories {
		user := fmt.Sprintf("lin-%03d", h)
		history := runCartClients(t, s, user, products, clients, opsPerClient, uint64(h))
		ops += len(history)
		for _, op := range history {
			if op.Output.(cartOut).code >= 500 {
				ambiguous++
			}
		}
		res, info := porcupine.CheckOperationsVerbose(model, history, 30*time.Second)
		if res != porcupine.Ok {
			path := filepath.Join(dir, fmt.Sprintf("history-%03d.html", h))
			if err := porcupine.VisualizePath(model, info, path); err != nil {
				t.Errorf("write the visualization: %v", err)
			}
			logStuck(t, model, info)
			t.Logf("%d histories checked, %d operations (%d answered 5xx, ambiguous); history %d: %s", h+1, ops, ambiguous, h, res)
			t.Fatalf("history %d of %d operations on %s's cart is %s; visualization: %s (kept with -artifacts)", h, len(history), user, res, path)
		}
	}
	counts := s.faults.Counts()
	t.Logf("%d histories checked, %d operations (%d answered 5xx, ambiguous), %d store faults injected: Ok",
		histories, ops, ambiguous, counts.Injected())
}

// cartIn is one operation of a client; cartOut its answer.
type cartIn struct {
	kind     string // put, add, delete, get, checkout, audit
	product  string
	quantity int
	declines bool // checkout: with a card that declines
}

type cartOut struct {
	code   int
	lines  string // the cart (put, delete, get, audit) or the order's lines (checkout)
	total  int64  // checkout: the order's total
	detail string // a problem's detail
	orders int    // audit: orders in the history
	spent  int64  // audit: the summary's totalSpentCents
}

// cartState is the model's state: comparable, so porcupine can merge
// equal states.
type cartState struct {
	lines   string // canonical productId:quantity list
	orders  int    // placed (a declined card's rejected orders change nothing the model keeps)
	charged int64
}

// cartModel is the sequential specification of one user's cart, checkout
// and orders at fixed prices.
func cartModel(prices map[string]int64) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{cartState{}} },
		Step: func(state, input, output any) []any {
			st, in, out := state.(cartState), input.(cartIn), output.(cartOut)
			lines := parseLines(st.lines)
			ambiguous := out.code >= 500
			switch in.kind {
			case "put", "add", "delete":
				after := maps.Clone(lines)
				switch in.kind {
				case "put":
					after[in.product] = in.quantity
				case "add":
					if lines[in.product]+in.quantity > domain.MaxQuantity {
						// Over the line's bound: 409, nothing written.
						if out.code == http.StatusConflict || ambiguous {
							return []any{st}
						}
						return nil
					}
					after[in.product] += in.quantity
				default:
					delete(after, in.product)
				}
				next := cartState{formatLines(after), st.orders, st.charged}
				switch {
				case out.code == http.StatusOK && out.lines == next.lines:
					return []any{next}
				case ambiguous:
					return []any{st, next}
				case out.code >= 400 && out.code < 500 && out.code != http.StatusBadRequest:
					// Refused (a cart that kept changing): nothing written.
					return []any{st}
				}
				return nil
			case "get":
				if ambiguous || (out.code == http.StatusOK && out.lines == st.lines) {
					return []any{st}
				}
				return nil
			case "checkout":
				var total int64
				for p, q := range lines {
					total += int64(q) * prices[p]
				}
				ordered := cartState{"", st.orders + 1, st.charged + total}
				if in.declines {
					// A declined card leaves the cart and the charges as
					// they were, whatever the answer.
					ordered = st
				}
				switch {
				case out.code == http.StatusCreated:
					if !in.declines && len(lines) > 0 && out.lines == st.lines && out.total == total {
						return []any{ordered}
					}
				case out.code == http.StatusPaymentRequired:
					if in.declines && len(lines) > 0 {
						return []any{st}
					}
				case out.code == http.StatusConflict && out.detail == "the cart is empty":
					if len(lines) == 0 {
						return []any{st}
					}
				case out.code == http.StatusConflict:
					return []any{st}
				case ambiguous:
					if len(lines) == 0 {
						return []any{st}
					}
					return []any{st, ordered}
				}
				return nil
			case "audit":
				if out.lines == st.lines && out.orders == st.orders && out.spent == st.charged {
					return []any{st}
				}
				return nil
			}
			return nil
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(cartIn), output.(cartOut)
			var b strings.Builder
			b.WriteString(in.kind)
			if in.product != "" {
				fmt.Fprintf(&b, " %s", in.product)
			}
			switch in.kind {
			case "put":
				fmt.Fprintf(&b, "=%d", in.quantity)
			case "add":
				fmt.Fprintf(&b, "+%d", in.quantity)
			}
			fmt.Fprintf(&b, " → %d [%s]", out.code, out.lines)
			if in.kind == "checkout" && in.declines {
				b.WriteString(" (a card that declines)")
			}
			if in.kind == "checkout" && out.code == http.StatusCreated {
				fmt.Fprintf(&b, " total %d", out.total)
			}
			if in.kind == "audit" {
				fmt.Fprintf(&b, " orders %d spent %d", out.orders, out.spent)
			}
			if out.detail != "" {
				fmt.Fprintf(&b, " (%s)", out.detail)
			}
			return b.String()
		},
		DescribeState: func(state any) string {
			st := state.(cartState)
			return fmt.Sprintf("[%s] orders %d charged %d", st.lines, st.orders, st.charged)
		},
	}
	return nm.ToModel()
}

// runCartClients runs the clients on user's cart with the store's faults
// on, then the audit with them off, and returns the history.
func runCartClients(t *testing.T, s *liveShop, user string, products []string, clients, opsPerClient int, seed uint64) []porcupine.Operation {
	t.Helper()
	tok := testToken(t, user, false)
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	var mu sync.Mutex
	var history []porcupine.Operation
	s.faults.Break()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for i := range opsPerClient {
				var in cartIn
				switch r := rng.IntN(100); {
				case r < 30:
					in = cartIn{kind: "put", product: products[rng.IntN(len(products))], quantity: 1 + rng.IntN(99)}
				case r < 45:
					// Up to 40 at a time: a line reaches 99 now and then.
					in = cartIn{kind: "add", product: products[rng.IntN(len(products))], quantity: 1 + rng.IntN(40)}
				case r < 60:
					in = cartIn{kind: "delete", product: products[rng.IntN(len(products))]}
				case r < 80:
					in = cartIn{kind: "get"}
				default:
					// One in five with a card that declines.
					in = cartIn{kind: "checkout", declines: rng.IntN(5) == 0}
				}
				call := now()
				out, err := cartCall(s, tok, in, fmt.Sprintf("%s-%d-%d", user, c, i))
				ret := now()
				if err != nil {
					t.Errorf("client %d: %s: %v", c, in.kind, err)
					return
				}
				if in.kind == "get" && out.code >= 500 {
					// A read that failed changed nothing and says
					// nothing: leaving it out keeps the search small.
					continue
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	s.faults.Heal()

	// The audit, once the sweeper has ended every order a checkout left
	// in progress and the orders feed has settled whatever one left.
	s.awaitOrdersRest(tok, 20*time.Second)
	if stale := s.awaitConverged(map[string]string{user: tok}, 10*time.Second); len(stale) > 0 {
		t.Fatalf("the feed did not converge: %v", stale)
	}
	call := now()
	out, err := cartCall(s, tok, cartIn{kind: "get"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []struct{ ID, Status string } `json:"items"`
	}
	s.must("GET", "/v1/orders?limit=100", tok, nil, nil, http.StatusOK, &page)
	var sum liveSummary
	s.must("GET", "/v1/me/summary", tok, nil, nil, http.StatusOK, &sum)
	for _, o := range page.Items {
		if o.Status == domain.StatusPlaced {
			out.orders++
		}
	}
	out.spent = sum.TotalSpentCents
	history = append(history, porcupine.Operation{ClientId: clients, Input: cartIn{kind: "audit"}, Call: call, Output: out, Return: now()})
	return history
}

// cartCall sends one operation without retrying and returns its answer.
func cartCall(s *liveShop, tok string, in cartIn, key string) (cartOut, error) {
	var (
		code int
		b    []byte
		err  error
	)
	switch in.kind {
	case "put":
		code, b, err = httpDo(s.client, "PUT", s.URL+"/v1/cart/items/"+in.product, tok, map[string]int{"quantity": in.quantity}, nil)
	case "add":
		code, b, err = httpDo(s.client, "POST", s.URL+"/v1/cart/items/"+in.product, tok, map[string]int{"quantity": in.quantity}, nil)
	case "delete":
		code, b, err = httpDo(s.client, "DELETE", s.URL+"/v1/cart/items/"+in.product, tok, nil, nil)
	case "get":
		code, b, err = httpDo(s.client, "GET", s.URL+"/v1/cart", tok, nil, nil)
	case "checkout":
		body := maps.Clone(addressBody)
		if in.declines {
			body["paymentMethod"] = "pm_card_chargeDeclined"
		}
		code, b, err = httpDo(s.client, "POST", s.URL+"/v1/checkout", tok, body, map[string]string{"Idempotency-Key": key})
	}
	if err != nil {
		return cartOut{}, err
	}
	out := cartOut{code: code}
	switch {
	case code == http.StatusCreated:
		var o liveOrder
		if err := json.Unmarshal(b, &o); err != nil {
			return out, fmt.Errorf("decode %s: %v", b, err)
		}
		lines := map[string]int{}
		for _, l := range o.Items {
			lines[l.ProductID] = l.Quantity
		}
		out.lines, out.total = formatLines(lines), o.TotalCents
	case code == http.StatusOK:
		var c liveCart
		if err := json.Unmarshal(b, &c); err != nil {
			return out, fmt.Errorf("decode %s: %v", b, err)
		}
		lines := map[string]int{}
		for _, l := range c.Items {
			lines[l.ProductID] = l.Quantity
		}
		out.lines = formatLines(lines)
	default:
		var p liveProblem
		_ = json.Unmarshal(b, &p)
		out.detail = p.Detail
	}
	return out, nil
}

// formatLines and parseLines are the canonical text of a cart's lines.
func formatLines(lines map[string]int) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(lines)) {
		parts = append(parts, p+":"+strconv.Itoa(lines[p]))
	}
	return strings.Join(parts, ",")
}

func parseLines(s string) map[string]int {
	lines := map[string]int{}
	if s == "" {
		return lines
	}
	for part := range strings.SplitSeq(s, ",") {
		p, q, _ := strings.Cut(part, ":")
		n, _ := strconv.Atoi(q)
		lines[p] = n
	}
	return lines
}

// logStuck logs the end of the longest prefix of the history the checker
// could linearize: the operations just before the one no order explains.
func logStuck(t *testing.T, model porcupine.Model, info porcupine.LinearizationInfo) {
	t.Helper()
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, lin := range partition {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	from := max(0, len(longest)-6)
	for i, op := range longest[from:] {
		t.Logf("linearized #%d (client %d, %.3f–%.3f ms): %s", from+i+1, op.ClientId,
			float64(op.Call)/1e6, float64(op.Return)/1e6, model.DescribeOperation(op.Input, op.Output))
	}
}
