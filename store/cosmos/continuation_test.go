package cosmos

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
)

// Cosmos's token goes back to the SDK byte for byte; anything altered or
// used elsewhere is EINVALID before a request is made.
func TestContinuationSeal(t *testing.T) {
	s := &Store{cfg: Config{Database: "shop"}}
	carts := &Container{name: "carts", store: s}
	orders := &Container{name: "orders", store: s}
	byName := sqlQuery{Text: "SELECT * FROM c ORDER BY c.name ASC, c.id ASC"}
	byDate := sqlQuery{Text: "SELECT * FROM c ORDER BY c.createdAt DESC, c.id DESC"}
	withParam := func(v any) sqlQuery {
		return sqlQuery{Text: "SELECT * FROM c WHERE c.type = @p0", Params: []azcosmos.QueryParameter{{Name: "@p0", Value: v}}}
	}
	cosmosToken := `[{"token":"+RID:~AbCdEf==#RT:1#TRC:3#ISV:2#IEO:65567#QCF:8","range":{"min":"","max":"FF"}}]`
	sealed := seal(carts.queryScope("u1", byName), cosmosToken)

	got, err := unseal(carts.queryScope("u1", byName), sealed)
	if err != nil {
		t.Fatalf("unseal of an untouched token: %v", err)
	}
	if got != cosmosToken {
		t.Errorf("token handed back = %q, want Cosmos's %q", got, cosmosToken)
	}
	if got := seal("any", ""); got != "" {
		t.Errorf("the last page's empty token sealed to %q, want empty", got)
	}

	altered := []byte(sealed)
	altered[len(altered)/3] ^= 1
	tests := []struct {
		name   string
		scope  string
		sealed string
	}{
		{"altered", carts.queryScope("u1", byName), string(altered)},
		{"garbage", carts.queryScope("u1", byName), "not a token"},
		{"raw Cosmos token", carts.queryScope("u1", byName), cosmosToken},
		{"another query", carts.queryScope("u1", byDate), sealed},
		{"another partition", carts.queryScope("u2", byName), sealed},
		{"another container", orders.queryScope("u1", byName), sealed},
		{"another parameter value", carts.queryScope("u1", withParam("cart")), seal(carts.queryScope("u1", withParam("order")), cosmosToken)},
		{"a feed token on a query", carts.queryScope("u1", byName), seal(carts.feedScope(), cosmosToken)},
		{"a feed token of another container", orders.feedScope(), seal(carts.feedScope(), cosmosToken)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := unseal(tc.scope, tc.sealed)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code = %q, want %q", got, want)
			}
		})
	}
}
