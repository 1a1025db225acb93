package repo_test

import (
	"encoding/json"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// TestACopyOfANewerVersionIsNotReplaced: a feed worker of this build
// that puts a whole copy (a summary made from its product) over a copy a
// newer build wrote would downgrade it, however new its source version:
// the read-modify-write refuses it as unavailable, and the stored copy
// keeps its version and the fields this build does not know.
func TestACopyOfANewerVersionIsNotReplaced(t *testing.T) {
	st := newStore(t)
	c := st.Container(store.ProductsByCategoryContainer)
	newer := []byte(`{"id":"p1","type":"productSummary","schemaVersion":3,"categoryId":"tea","name":"Tea","sourceVersion":1,"futureField":"kept"}`)
	if _, err := c.Create(t.Context(), "tea", newer); err != nil {
		t.Fatal(err)
	}
	s := domain.ProductSummary{Meta: domain.Meta{ID: "p1", Type: domain.TypeProductSummary, SchemaVersion: domain.SchemaVersion},
		CategoryID: "tea", Name: "Tea, renamed", SourceVersion: 2}
	if _, err := repo.New(st, 0).ProductSummaries.Put(t.Context(), s); !domain.IsCode(err, domain.EUNAVAILABLE) {
		t.Errorf("Put over a version-3 copy: %v, want EUNAVAILABLE", err)
	}
	r, err := c.Read(t.Context(), "tea", "p1")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Item, &got); err != nil {
		t.Fatal(err)
	}
	if got["schemaVersion"] != float64(3) || got["futureField"] != "kept" {
		t.Errorf("stored copy %s was downgraded", r.Item)
	}
}
