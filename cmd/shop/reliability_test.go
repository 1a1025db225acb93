package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
)

// The end-to-end reliability tests (shutdown, crash, invariants, slow
// clients) talk to the real program over real HTTP. These are their
// shared pieces.

const testJWTSecret = "reliability-test-secret-of-32-bytes-at-least"

// envOf returns a getenv over the given KEY=VALUE pairs.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// shopEnv is the environment of a test shop on a free loopback port with
// its data in dir, no sample data and the given extra settings.
func shopEnv(dir string, extra ...string) []string {
	return append([]string{
		"SHOP_ADDR=127.0.0.1:0", "SHOP_DATA_DIR=" + dir, "SHOP_SEED=false", "SHOP_PARTITIONS=2",
		"SHOP_JWT_SECRET=" + testJWTSecret, "SHOP_LOG_LEVEL=error",
		"SHOP_RATE_USER=0", "SHOP_RATE_ANON=0",
	}, extra...)
}

// runShop runs the program as `go run ./cmd/shop` does, with env as its
// whole environment, until the test ends, and returns where it listens and
// its output so far (see listeningURL).
func runShop(t *testing.T, env []string) (string, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"shop"}, envOf(env...), pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("run did not return")
		}
	})
	return listeningURL(t, pr)
}

// listeningURL reads the program's output until it says where it
// listens, then keeps draining it (so the program never blocks on a
// write) into lines, which the caller may print on failure.
func listeningURL(t *testing.T, out io.Reader) (string, *bytes.Buffer) {
	t.Helper()
	var rest bytes.Buffer
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "shop: listening on "); ok && !sent {
				found <- u
				sent = true
				continue
			}
			if !sent {
				rest.WriteString(line + "\n")
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("the shop ended before listening:\n%s", rest.String())
		}
		return u, &rest
	case <-time.After(60 * time.Second):
		t.Fatal("the shop did not say it was listening within 60 s")
	}
	return "", nil
}

// testToken signs a token for the test shops' secret.
func testToken(t testing.TB, user string, admin bool) string {
	t.Helper()
	tok, err := api.IssueToken([]byte(testJWTSecret), user, "User "+user, user+"@example.com", admin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// httpDo sends one JSON request and returns the status and the body.
func httpDo(c *http.Client, method, url, tok string, body any, header map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := c.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// mustDo is httpDo that fails the test unless the status is want.
func mustDo(t testing.TB, method, url, tok string, body any, want int) []byte {
	t.Helper()
	code, b, err := httpDo(http.DefaultClient, method, url, tok, body, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if code != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, url, code, want, b)
	}
	return b
}

// createCatalog creates a category "tea" and n products tea-0.. through
// the admin API and returns their ids.
func createCatalog(t testing.TB, base string, n int) []string {
	t.Helper()
	admin := testToken(t, "boss", true)
	mustDo(t, "PUT", base+"/v1/categories/tea", admin, map[string]string{"name": "Tea"}, http.StatusCreated)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("tea-%d", i)
		mustDo(t, "POST", base+"/v1/products", admin, map[string]any{
			"productId": id, "name": "Tea " + id, "priceCents": 500 + i, "categoryId": "tea", "stock": 1_000_000,
		}, http.StatusCreated)
		ids = append(ids, id)
	}
	return ids
}

// addressBody is a valid checkout body.
var addressBody = map[string]any{"paymentMethod": "pm_card_visa", "shippingAddress": map[string]any{
	"name": "Ada Lovelace", "line1": "1 Analytical St", "city": "London", "postalCode": "N1 9GU", "country": "GB",
}}

// TestRateLimitDefaults: limits protect a shared deployment (Cosmos) and
// stay out of the way of a local shop, where `shop bench --url` runs.
func TestRateLimitDefaults(t *testing.T) {
	for _, tc := range []struct {
		name               string
		env                []string
		wantUser, wantAnon int
		wantErr            bool
	}{
		{"EmbeddedStoreIsUnlimited", nil, 0, 0, false},
		{"CosmosIsLimited", []string{"COSMOS_ENDPOINT=https://example.documents.azure.com"}, 1200, 600, false},
		{"Configured", []string{"SHOP_RATE_USER=5", "SHOP_RATE_ANON=2"}, 5, 2, false},
		{"NotANumber", []string{"SHOP_RATE_USER=many"}, 0, 0, true},
		{"Negative", []string{"SHOP_RATE_ANON=-1"}, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig("serve", nil, envOf(tc.env...), io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if c.RateUser != tc.wantUser || c.RateAnon != tc.wantAnon {
				t.Errorf("rate user %d anon %d, want %d and %d", c.RateUser, c.RateAnon, tc.wantUser, tc.wantAnon)
			}
		})
	}
}
