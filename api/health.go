package api

import (
	"context"
	_ "embed"
	"net/http"

	"github.com/reference-shop/shop/domain"
)

// spec is openapi.yaml, the one copy: the repository root's openapi.yaml
// is a symbolic link to it, because go:embed can neither reach a parent
// directory nor embed a symbolic link.
//
//go:embed openapi.yaml
var spec []byte

func handleSpec() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(spec)
	}
}

type healthView struct {
	Status string `json:"status"`
}

func handleHealth() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, healthView{Status: "ok"})
	}
}

// handleReady answers 503 while the store cannot serve.
func handleReady(ready func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := ready(r.Context()); err != nil {
			writeProblem(w, r, domain.Errorf(domain.EUNAVAILABLE, "not ready"))
			return
		}
		encode(w, http.StatusOK, healthView{Status: "ready"})
	}
}
