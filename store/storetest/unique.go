package storetest

import (
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

func testUniqueKeys(t *testing.T, s store.Store) {
	c := ensure(t, s, suite.UniqueKeysDef())
	mustCreate(t, c, "p", item("p", "a", "email", "x@example.com"))
	_, err := c.Create(ctx, "p", item("p", "b", "email", "x@example.com"))
	wantCode(t, "Create with a used unique value in the same partition", err, domain.ECONFLICT)
	mustCreate(t, c, "q", item("q", "b", "email", "x@example.com"))
	_, err = c.Replace(ctx, "p", "a", item("p", "a", "email", "y@example.com"), nil)
	wantCode(t, "Replace of the owner itself", err, "")
	mustCreate(t, c, "p", item("p", "b", "email", "x@example.com"))
	_, err = c.Patch(ctx, "p", "b", []store.PatchOp{{Op: store.PatchSet, Path: "/email", Value: "y@example.com"}}, nil)
	wantCode(t, "Patch to a used unique value", err, domain.ECONFLICT)
}
