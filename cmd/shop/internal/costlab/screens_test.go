package costlab

import (
	"context"
	"fmt"
	"testing"

	"github.com/reference-shop/shop/cmd/shop/internal/shopstore"
	"github.com/reference-shop/shop/store"
)

// newBenchLab builds the cost lab's data set for the benchmarks. The
// store's own operations are benchmarked in store/embedded; these time the
// screens made of them. Run with
//
//	go test ./cmd/shop/internal/costlab -run '^$' -bench Screens -benchmem
func newBenchLab(b *testing.B) (store.Store, *labData) {
	b.Helper()
	s, _, _, closeStore, err := shopstore.OpenScratch(context.Background(), noEnv, "costlab", 4)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeStore)
	d, err := buildLab(context.Background(), s, labOptions{
		Products: 400, Categories: 8, ReviewsPerProduct: 8, Users: 40, OrdersPerUser: 12,
		PriceChanges: 2, CartsPerProduct: 2,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, d
}

// BenchmarkScreens renders each screen of the cost lab in both designs:
// what the Request Unit ratios of `shop cost` mean in time and memory on
// the embedded store.
func BenchmarkScreens(b *testing.B) {
	s, d := newBenchLab(b)
	ctx := context.Background()
	for _, sc := range labScreens(store.Metered(s), d) {
		for _, des := range []design{sc.denormalized, sc.normalized} {
			b.Run(fmt.Sprintf("%s/%s", sc.name, des.name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := des.render(ctx, i); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
