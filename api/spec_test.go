package api_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
)

// TestEveryRouteIsInTheSpec compares the router's routes with the
// operations of openapi.yaml, both ways: a route the spec does not list,
// or an operation no route serves, fails.
func TestEveryRouteIsInTheSpec(t *testing.T) {
	s := newShop(t) // dev mode: the dev token route is registered
	routes, ok := s.handler.(chi.Routes)
	if !ok {
		t.Fatalf("NewServer returned %T, not a chi router", s.handler)
	}
	var served []string
	if err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served = append(served, method+" "+strings.TrimSuffix(route, "/"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	var specified []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			specified = append(specified, method+" "+path)
		}
	}
	if len(served) == 0 {
		t.Fatal("walked no routes")
	}
	slices.Sort(served)
	slices.Sort(specified)
	for _, r := range served {
		if !slices.Contains(specified, r) {
			t.Errorf("route %s is not in openapi.yaml", r)
		}
	}
	for _, op := range specified {
		if !slices.Contains(served, op) {
			t.Errorf("openapi.yaml lists %s, which no route serves", op)
		}
	}
}
