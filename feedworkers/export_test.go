package feedworkers

import (
	"context"
	"fmt"

	"github.com/reference-shop/shop/domain"
)

// ProductStepNames are the names of the products feed's steps, in the
// order they run.
func ProductStepNames() []string {
	var names []string
	for _, s := range (&productBatch{h: &Handlers{}}).steps() {
		names = append(names, s.name)
	}
	return names
}

// RunProductStep runs the products feed's step called name alone, on p,
// as in a batch that may be a replay when replay says so. What the step
// collects for the categories index is dropped: writing the index is the
// batch's work, not a step's.
func (h *Handlers) RunProductStep(ctx context.Context, name string, p domain.Product, replay bool) error {
	b := &productBatch{h: h, replay: replay, rc: recount{every: replay}}
	for _, s := range b.steps() {
		if s.name == name {
			return s.run(ctx, p)
		}
	}
	return fmt.Errorf("no product step %q", name)
}
