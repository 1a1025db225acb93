package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/storetest/suite"
)

func testEnsureContainer(t *testing.T, s store.Store) {
	def := define(t, suite.EnsureContainerDef())
	if provisioned(t) {
		// The target creates none: the container was deployed beforehand.
		ensureDefined(t, s, def)
		t.Log("Provisioned: the container exists already, so its create (the first EnsureContainer, changed=true) is not run here; " +
			"the keyed runs cover it: store/embedded's TestContract on every go test, store/cosmos's TestContract with a key or on the emulator")
	} else {
		changed, err := s.EnsureContainer(ctx, def)
		wantCode(t, "first EnsureContainer", err, "")
		if !changed {
			t.Errorf("first EnsureContainer: changed = false, want true")
		}
	}
	changed, err := s.EnsureContainer(ctx, def)
	wantCode(t, "second EnsureContainer", err, "")
	if changed {
		t.Errorf("second EnsureContainer of the same definition: changed = true, want false")
	}
	other := def
	other.PartitionKeyPath = "/other"
	_, err = s.EnsureContainer(ctx, other)
	wantCode(t, "EnsureContainer with another partition key", err, domain.ECONFLICT)
	_, err = s.Container(missingContainer).Read(ctx, "p", "x")
	wantCode(t, "Read in a missing container", err, domain.ENOTFOUND)
}

func testPartitionKeyRequired(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p", item("p", "a"))
	calls := map[string]error{}
	_, calls["Read"] = c.Read(ctx, "", "a")
	_, calls["Create"] = c.Create(ctx, "", item("", "b"))
	_, calls["Replace"] = c.Replace(ctx, "", "a", item("", "a"), nil)
	_, calls["Upsert"] = c.Upsert(ctx, "", item("", "a"), nil)
	_, calls["Patch"] = c.Patch(ctx, "", "a", []store.PatchOp{{Op: store.PatchSet, Path: "/x", Value: 1}}, nil)
	_, calls["Delete"] = c.Delete(ctx, "", "a", nil)
	_, calls["ExecuteBatch"] = c.ExecuteBatch(ctx, "", []store.BatchOp{{Kind: store.BatchDelete, ID: "a"}})
	_, calls["Create without the key property"] = c.Create(ctx, "p", []byte(`{"id":"c"}`))
	_, calls["Create with another key in the item"] = c.Create(ctx, "p", item("q", "c"))
	_, calls["Replace with another key in the item"] = c.Replace(ctx, "p", "a", item("q", "a"), nil)
	for name, err := range calls {
		wantCode(t, name, err, domain.EINVALID)
	}
}

func testIDUniquePerPartition(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p1", item("p1", "same", "n", 1))
	_, err := c.Create(ctx, "p1", item("p1", "same", "n", 2))
	wantCode(t, "second Create in the same partition", err, domain.ECONFLICT)
	mustCreate(t, c, "p2", item("p2", "same", "n", 3))
	for pk, want := range map[string]float64{"p1": 1, "p2": 3} {
		if got := mustRead(t, c, pk, "same")["n"]; got != want {
			t.Errorf("Read(%s, same).n = %v, want %v", pk, got, want)
		}
	}
}

func testETagChangesOnEveryWrite(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	seen := map[string]string{}
	check := func(what string, r store.ItemResponse, err error) {
		t.Helper()
		wantCode(t, what, err, "")
		charged(t, what, r.RequestCharge)
		if r.ETag == "" || r.ETag == `"mine"` {
			t.Fatalf("%s: ETag = %q, want a new store-made one", what, r.ETag)
		}
		if got := etagOf(t, r.Item); got != r.ETag {
			t.Errorf("%s: item _etag = %q, response ETag = %q", what, got, r.ETag)
		}
		if prev, ok := seen[r.ETag]; ok {
			t.Errorf("%s: ETag %s already returned by %s", what, r.ETag, prev)
		}
		seen[r.ETag] = what
	}
	r, err := c.Create(ctx, "p", item("p", "a", "_etag", `"mine"`))
	check("Create", r, err)
	r, err = c.Replace(ctx, "p", "a", item("p", "a", "n", 1), nil)
	check("Replace", r, err)
	r, err = c.Upsert(ctx, "p", item("p", "a", "n", 2), nil)
	check("Upsert", r, err)
	r, err = c.Patch(ctx, "p", "a", []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: 1}}, nil)
	check("Patch", r, err)
	read, err := c.Read(ctx, "p", "a")
	wantCode(t, "Read", err, "")
	if got, want := read.ETag, r.ETag; got != want {
		t.Errorf("Read ETag = %q, want the last write's %q", got, want)
	}
}

// testReadIfNoneMatch: a read naming the current _etag is answered
// NotModified with no document, charged; any other ETag gets the item.
func testReadIfNoneMatch(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	first := mustCreate(t, c, "p", item("p", "a", "n", 1))
	r, err := c.ReadIfNoneMatch(ctx, "p", "a", first.ETag)
	wantCode(t, "ReadIfNoneMatch(current)", err, "")
	if !r.NotModified || r.Item != nil || r.ETag != first.ETag {
		t.Fatalf("ReadIfNoneMatch(current) = not modified %v, %d bytes, ETag %q; want not modified, no item, ETag %q",
			r.NotModified, len(r.Item), r.ETag, first.ETag)
	}
	charged(t, "ReadIfNoneMatch(current)", r.RequestCharge)

	second, err := c.Replace(ctx, "p", "a", item("p", "a", "n", 2), nil)
	wantCode(t, "Replace", err, "")
	for _, etag := range []string{first.ETag, ""} {
		r, err = c.ReadIfNoneMatch(ctx, "p", "a", etag)
		wantCode(t, "ReadIfNoneMatch(old)", err, "")
		if r.NotModified || r.ETag != second.ETag || etagOf(t, r.Item) != second.ETag {
			t.Fatalf("ReadIfNoneMatch(%q) after a replace = not modified %v, ETag %q, item %s; want the item at %q",
				etag, r.NotModified, r.ETag, r.Item, second.ETag)
		}
		charged(t, "ReadIfNoneMatch(old)", r.RequestCharge)
	}
	_, err = c.ReadIfNoneMatch(ctx, "p", "missing", second.ETag)
	wantCode(t, "ReadIfNoneMatch(missing)", err, domain.ENOTFOUND)
}

func testTSIsSet(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	before := time.Now().Add(-time.Minute).Unix()
	r := mustCreate(t, c, "p", item("p", "a", "_ts", 1))
	after := time.Now().Add(time.Minute).Unix()
	ts, ok := decode(t, r.Item)["_ts"].(float64)
	if !ok || int64(ts) < before || int64(ts) > after {
		t.Errorf("_ts = %v, want unix seconds near now (%d..%d)", ts, before, after)
	}
}

func testStaleIfMatch(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	first := mustCreate(t, c, "p", item("p", "a", "n", 1))
	current, err := c.Replace(ctx, "p", "a", item("p", "a", "n", 2), &store.WriteOptions{IfMatch: first.ETag})
	wantCode(t, "Replace with the current ETag", err, "")
	stale := &store.WriteOptions{IfMatch: first.ETag}
	_, err = c.Replace(ctx, "p", "a", item("p", "a", "n", 3), stale)
	wantCode(t, "Replace with a stale ETag", err, domain.EPRECONDITION)
	_, err = c.Upsert(ctx, "p", item("p", "a", "n", 3), stale)
	wantCode(t, "Upsert with a stale ETag", err, domain.EPRECONDITION)
	_, err = c.Patch(ctx, "p", "a", []store.PatchOp{{Op: store.PatchSet, Path: "/n", Value: 3}}, &store.PatchOptions{IfMatch: stale.IfMatch})
	wantCode(t, "Patch with a stale ETag", err, domain.EPRECONDITION)
	_, err = c.Delete(ctx, "p", "a", stale)
	wantCode(t, "Delete with a stale ETag", err, domain.EPRECONDITION)
	if got := mustRead(t, c, "p", "a")["n"]; got != 2.0 {
		t.Errorf("after the refused writes n = %v, want 2", got)
	}
	r, err := c.Delete(ctx, "p", "a", &store.WriteOptions{IfMatch: current.ETag})
	wantCode(t, "Delete with the current ETag", err, "")
	charged(t, "Delete", r.RequestCharge)
}

// testUpsertIfMatchOfMissing: If-Match guards the replace an upsert may
// be, never a create: an upsert with If-Match of an item that does not
// exist creates it, alone and in a batch (Cosmos; its SDKs document it).
// On an item that exists a stale If-Match is still EPRECONDITION.
func testUpsertIfMatchOfMissing(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	guard := &store.WriteOptions{IfMatch: `"no-such-version"`}
	r, err := c.Upsert(ctx, "p", item("p", "new", "n", 1), guard)
	wantCode(t, "Upsert with If-Match of a missing item", err, "")
	charged(t, "Upsert", r.RequestCharge)
	if got := mustRead(t, c, "p", "new")["n"]; got != 1.0 {
		t.Errorf("after the upsert n = %v, want 1", got)
	}
	_, err = c.Upsert(ctx, "p", item("p", "new", "n", 2), guard)
	wantCode(t, "Upsert with a stale If-Match of the item it created", err, domain.EPRECONDITION)
	b, err := c.ExecuteBatch(ctx, "p", []store.BatchOp{{Kind: store.BatchUpsert, Item: item("p", "batched", "n", 1), IfMatch: guard.IfMatch}})
	wantCode(t, "batch upsert with If-Match of a missing item", err, "")
	if !b.Committed {
		t.Fatalf("batch upsert with If-Match of a missing item: Committed = false, want true")
	}
	mustRead(t, c, "p", "batched")
}

func testMissingIsNotFound(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p", item("p", "a"))
	calls := map[string]error{}
	_, calls["Read"] = c.Read(ctx, "p", "missing")
	_, calls["Read in another partition"] = c.Read(ctx, "q", "a")
	_, calls["Replace"] = c.Replace(ctx, "p", "missing", item("p", "missing"), nil)
	_, calls["Patch"] = c.Patch(ctx, "p", "missing", []store.PatchOp{{Op: store.PatchSet, Path: "/x", Value: 1}}, nil)
	_, calls["Delete"] = c.Delete(ctx, "p", "missing", nil)
	for name, err := range calls {
		wantCode(t, name, err, domain.ENOTFOUND)
	}
	r, err := c.Delete(ctx, "p", "a", nil)
	wantCode(t, "Delete", err, "")
	charged(t, "Delete", r.RequestCharge)
	_, err = c.Read(ctx, "p", "a")
	wantCode(t, "Read after Delete", err, domain.ENOTFOUND)
}

func testItemOver2MB(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	big := strings.Repeat("x", store.MaxItemBytes)
	_, err := c.Create(ctx, "p", item("p", "big", "blob", big))
	wantCode(t, "Create over 2 MB", err, domain.ETOOLARGE)
	mustCreate(t, c, "p", item("p", "small", "blob", "x"))
	_, err = c.Replace(ctx, "p", "small", item("p", "small", "blob", big), nil)
	wantCode(t, "Replace over 2 MB", err, domain.ETOOLARGE)
	mustCreate(t, c, "p", item("p", "fits", "blob", strings.Repeat("x", store.MaxItemBytes-64*1024)))
}

func testBadInput(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p", item("p", "a"))
	badIDs := map[string]string{
		"empty":         "",
		"over 1023":     strings.Repeat("i", store.MaxIDBytes+1),
		"slash":         "a/b",
		"backslash":     `a\b`,
		"question mark": "a?b",
		"hash":          "a#b",
		"double quote":  `a"b`,
		"tab":           "a\tb",
		"NUL":           "a\x00b",
	}
	for name, id := range badIDs {
		t.Run("ID "+name, func(t *testing.T) {
			_, err := c.Create(ctx, "p", item("p", id))
			wantCode(t, "Create", err, domain.EINVALID)
			_, err = c.Read(ctx, "p", id)
			wantCode(t, "Read", err, domain.EINVALID)
		})
	}
	long := strings.Repeat("k", store.MaxPartitionKey+1)
	_, err := c.Create(ctx, long, item(long, "a"))
	wantCode(t, "Create with an oversize partition key", err, domain.EINVALID)
	_, err = c.Read(ctx, long, "a")
	wantCode(t, "Read with an oversize partition key", err, domain.EINVALID)
	for name, doc := range map[string]string{"array": `[1,2]`, "string": `"x"`, "garbage": `{"id":`, "empty": ``} {
		_, err = c.Create(ctx, "p", []byte(doc))
		wantCode(t, "Create of a "+name, err, domain.EINVALID)
	}
	_, err = c.Replace(ctx, "p", "a", item("p", "b"), nil)
	wantCode(t, "Replace whose item id differs from the id argument", err, domain.EINVALID)
	_, err = c.Query(ctx, store.Query{PartitionKey: "p", Limit: store.MaxQueryPageSize + 1})
	wantCode(t, "Query over the page size limit", err, domain.EINVALID)
}

// testOptimisticConcurrency: many writers doing read-modify-replace with
// If-Match on one document, retrying on 412, lose no update.
func testOptimisticConcurrency(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	mustCreate(t, c, "p", item("p", "counter", "n", 0))
	const writers, increments = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for done := 0; done < increments; {
				r, err := c.Read(ctx, "p", "counter")
				if err != nil {
					errs <- err
					return
				}
				doc, err := repo.Decode[map[string]any](r.Item)
				if err != nil {
					errs <- err
					return
				}
				n := doc["n"].(float64)
				_, err = c.Replace(ctx, "p", "counter", item("p", "counter", "n", n+1), &store.WriteOptions{IfMatch: r.ETag})
				switch {
				case err == nil:
					done++
				case !domain.IsCode(err, domain.EPRECONDITION):
					errs <- fmt.Errorf("replace: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mustRead(t, c, "p", "counter")["n"]
	if diff := cmp.Diff(float64(writers*increments), got); diff != "" {
		t.Errorf("counter after concurrent increments (-want +got):\n%s", diff)
	}
}
