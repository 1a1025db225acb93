package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// With OTEL_TRACES_EXPORTER=console the program prints each span as JSON
// on stdout: the product page's point read must be there as a store span
// named by the Cosmos DB conventions, carrying its Request Unit charge,
// inside the HTTP request's trace.
func TestConsoleExporterShowsStoreSpanWithRequestCharge(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"shop"}, envOf(shopEnv(dir, "OTEL_TRACES_EXPORTER=console", "SHOP_WORKERS=false")...), pw)
		pw.Close()
	}()
	var mu sync.Mutex
	var out strings.Builder
	listening := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "shop: listening on "); ok {
				listening <- u
			}
			mu.Lock()
			out.WriteString(line + "\n")
			mu.Unlock()
		}
	}()
	var base string
	select {
	case base = <-listening:
	case err := <-done:
		t.Fatalf("the shop ended before listening: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the shop did not say it was listening within 60 s")
	}
	id := createCatalog(t, base, 1)[0]
	resp, err := http.Get(base + "/v1/products/" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET product: %d", resp.StatusCode)
	}
	// Stopping flushes the exporter.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	<-drained

	type kv struct {
		Key   string
		Value struct{ Value any }
	}
	type span struct {
		Name        string
		SpanContext struct{ TraceID string }
		Parent      struct{ TraceID, SpanID string }
		Attributes  []kv
	}
	attr := func(s span, key string) (any, bool) {
		for _, a := range s.Attributes {
			if a.Key == key {
				return a.Value.Value, true
			}
		}
		return nil, false
	}
	// One JSON object per span, one per line; log lines are skipped.
	var spans []span
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, `{"Name":`) {
			continue
		}
		var s span
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("a span line is not JSON: %v\n%s", err, line)
		}
		spans = append(spans, s)
	}
	var httpTrace string
	for _, s := range spans {
		if s.Name == "GET /v1/products/{productId}" {
			httpTrace = s.SpanContext.TraceID
		}
	}
	if httpTrace == "" {
		t.Fatalf("no span named %q in the output:\n%.4000s", "GET /v1/products/{productId}", out.String())
	}
	for _, s := range spans {
		if s.Name != "read_item products" || s.Parent.TraceID != httpTrace {
			continue
		}
		ru, ok := attr(s, "azure.cosmosdb.operation.request_charge")
		if !ok {
			t.Fatalf("store span %q has no azure.cosmosdb.operation.request_charge: %+v", s.Name, s.Attributes)
		}
		if v, _ := ru.(float64); v <= 0 {
			t.Errorf("request charge %v, want > 0", ru)
		}
		if sys, _ := attr(s, "db.system.name"); sys != "azure.cosmosdb" {
			t.Errorf("db.system.name %v, want azure.cosmosdb", sys)
		}
		return
	}
	t.Fatalf("no read_item products span in the product page's trace %s among %d spans", httpTrace, len(spans))
}
