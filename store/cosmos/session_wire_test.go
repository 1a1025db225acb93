package cosmos

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The session container on the wire: what the SDK sends as
// x-ms-session-token, through the adapter, against the gateway of
// gateway_test.go.

// sessionsSent returns the x-ms-session-token of each request on
// documents since the last call, as "METHOD token".
func sessionsSent(g *gateway) []string {
	var out []string
	for _, r := range g.sent() {
		out = append(out, r.Method+" "+r.Session)
	}
	return out
}

func wantSent(t *testing.T, g *gateway, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, sessionsSent(g)); diff != "" {
		t.Errorf("x-ms-session-token sent (-want +got):\n%s", diff)
	}
}

// noError returns a function that fails t on the error of a call:
// ok(c.Read(ctx, pk, id)).
func noError(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSessionTokensOnTheWire(t *testing.T) {
	ctx := context.Background()
	item := []byte(`{"id":"p1","name":"Lamp"}`)

	t.Run("AReadSendsTheWritesToken", func(t *testing.T) {
		g, c, ok := writtenAt12(t)
		ok(c.Read(ctx, "p1", "p1"))
		// The write carries none: the write region's primary has every write.
		wantSent(t, g, "POST ", "GET 0:1#12#0=5")
	})
	t.Run("ALaggingAnswerDoesNotLowerIt", func(t *testing.T) {
		g, c, ok := writtenAt12(t)
		g.respond("0:1#10#0=4")
		ok(c.Read(ctx, "p1", "p1"))
		ok(c.Read(ctx, "p1", "p1"))
		wantSent(t, g, "POST ", "GET 0:1#12#0=5", "GET 0:1#12#0=5")
	})
	t.Run("EveryRangeOfTheContainer", func(t *testing.T) {
		g, c, ok := writtenAt12(t)
		g.respond("1:1#7#0=3")
		ok(c.Upsert(ctx, "p2", []byte(`{"id":"p2"}`), nil))
		g.respond("")
		ok(c.Read(ctx, "p1", "p1"))
		ok(c.Query(ctx, store.Query{PartitionKey: "p1"}))
		wantSent(t, g, "POST ", "POST ", "GET 0:1#12#0=5,1:1#7#0=3", "POST 0:1#12#0=5,1:1#7#0=3")
	})
	t.Run("ContainersApart", func(t *testing.T) {
		ok := noError(t)
		g := newGateway(t)
		s := g.open("")
		g.respond("0:1#12#0=5")
		ok(s.Container("products").Create(ctx, "p1", item))
		g.respond("")
		_, err := s.Container("carts").Read(ctx, "u1", "u1")
		if !domain.IsCode(err, domain.ENOTFOUND) {
			t.Fatalf("read of a missing cart: %v", err)
		}
		wantSent(t, g, "POST ", "GET ")
	})
	t.Run("FailuresThatReadThePartitionCarryOne", func(t *testing.T) {
		ok := noError(t)
		g := newGateway(t)
		c := g.open("").Container("products")
		ok(c.Create(ctx, "p1", item))
		g.respond("0:1#30#0=9")
		_, err := c.Replace(ctx, "p1", "p1", item, &store.WriteOptions{IfMatch: `"stale"`})
		if !domain.IsCode(err, domain.EPRECONDITION) {
			t.Fatalf("replace with a stale If-Match: %v", err)
		}
		g.respond("")
		ok(c.Read(ctx, "p1", "p1"))
		wantSent(t, g, "POST ", "PUT ", "GET 0:1#30#0=9")
	})
	t.Run("TheChangeFeedSendsIt", func(t *testing.T) {
		g, c, _ := writtenAt12(t)
		ranges, err := c.ReadFeedRanges(ctx)
		if err != nil || len(ranges) != 1 {
			t.Fatalf("ReadFeedRanges = %v, %v; want one range", ranges, err)
		}
		page, err := c.ReadChangeFeed(ctx, ranges[0], "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 {
			t.Errorf("change feed page holds %d items, want 1", len(page.Items))
		}
		sent := sessionsSent(g)
		if len(sent) < 2 || sent[0] != "POST " || sent[1] != "GET 0:1#12#0=5" {
			t.Errorf("x-ms-session-token sent = %q, want the write's on the feed read", sent)
		}
	})
}

// A client carries its token from one instance to another in the
// request's store.Session: it is sent with the process's own, and the
// token to carry on comes back in the same Session.
func TestSessionTokenOfTheClient(t *testing.T) {
	ctx := context.Background()
	t.Run("SentOnTheReadAndIssuedBack", func(t *testing.T) {
		g, c, ok := writtenAt12(t)

		rctx, sess := store.WithSession(ctx, "products/0:1#20#0=9,products/3:1#2#0=1,carts/0:1#4#0=2")
		g.respond("0:1#21#0=9")
		ok(c.Read(rctx, "p1", "p1"))
		tok, issued := sess.Issued()
		if want := "carts/0:1#4#0=2,products/0:1#21#0=9,products/3:1#2#0=1"; !issued || tok != want {
			t.Errorf("issued %q, %v; want %q", tok, issued, want)
		}
		// A request without the client's token sends the process's only:
		// what the client sent stayed in its request.
		g.respond("")
		ok(c.Read(ctx, "p1", "p1"))
		wantSent(t, g, "POST ", "GET 0:1#20#0=9,3:1#2#0=1", "GET 0:1#21#0=9")
	})
	t.Run("AnotherInstanceReadsTheWrite", func(t *testing.T) {
		ok := noError(t)
		g := newGateway(t)
		a := g.open("").Container("products")
		b := g.open("http://localhost:" + g.srv.URL[len("http://127.0.0.1:"):]).Container("products")

		wctx, written := store.WithSession(ctx, "")
		g.respond("0:1#12#0=5")
		ok(a.Create(wctx, "p1", []byte(`{"id":"p1"}`)))
		tok, _ := written.Issued()

		g.respond("")
		ok(b.Read(ctx, "p1", "p1")) // without the client's token
		rctx, _ := store.WithSession(ctx, tok)
		ok(b.Read(rctx, "p1", "p1"))
		wantSent(t, g, "POST ", "GET ", "GET 0:1#12#0=5")
	})
	t.Run("AClientsTokenNoReplicaReachesChangesNothingShared", func(t *testing.T) {
		// A client's token may be ahead of every replica (a forged one,
		// or one of a container since deleted and created again): the
		// read is tried again once with the instance's own token, the
		// client's entries for the container are dropped from what it
		// is issued, and the instance keeps its tokens for every other
		// request.
		g, c, ok := writtenAt12(t)

		rctx, sess := store.WithSession(ctx, "products/0:1#999999#0=999999,carts/0:1#4#0=2")
		g.failWhenSent("999999", http.StatusNotFound, substatusReadSessionNotAvailable)
		ok(c.Read(rctx, "p1", "p1"))
		if tok, issued := sess.Issued(); !issued || tok != "carts/0:1#4#0=2,products/0:1#12#0=5" {
			t.Errorf("issued %q, %v; want the client's products entry replaced by the instance's", tok, issued)
		}
		ok(c.Read(ctx, "p1", "p1"))
		// The SDK tries a read answered 404/1002 twice before it gives
		// up (its session retry policy), under the token it was given.
		wantSent(t, g, "POST ", "GET 0:1#999999#0=999999", "GET 0:1#999999#0=999999", "GET 0:1#12#0=5", "GET 0:1#12#0=5")
	})
	t.Run("AQueryIsTriedAgainWithItsBody", func(t *testing.T) {
		g, c, _ := writtenAt12(t)

		rctx, _ := store.WithSession(ctx, "products/0:1#999999#0=999999")
		g.failWhenSent("999999", http.StatusNotFound, substatusReadSessionNotAvailable)
		page, err := c.Query(rctx, store.Query{PartitionKey: "p1"})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("query = %d items, %v; want the one item, tried again with the instance's token", len(page.Items), err)
		}
		wantSent(t, g, "POST ", "POST 0:1#999999#0=999999", "POST 0:1#999999#0=999999", "POST 0:1#12#0=5")
	})
	t.Run("AnInstancesTokenNoReplicaReachesIsForgotten", func(t *testing.T) {
		// The instance's own token ahead of every replica: the container
		// was deleted and created again under its name. Only then are
		// the instance's tokens dropped.
		g, c, ok := writtenAt12(t)

		rctx, sess := store.WithSession(ctx, "carts/0:1#4#0=2")
		g.fail(http.StatusNotFound, substatusReadSessionNotAvailable)
		_, err := c.Read(rctx, "p1", "p1")
		if !domain.IsCode(err, domain.EUNAVAILABLE) {
			t.Fatalf("read no replica can serve: %v, want %s", err, domain.EUNAVAILABLE)
		}
		if tok, issued := sess.Issued(); !issued || tok != "carts/0:1#4#0=2" {
			t.Errorf("issued %q, %v; want the client's token without products", tok, issued)
		}
		g.fail(0, "")
		ok(c.Read(ctx, "p1", "p1"))
		wantSent(t, g, "POST ", "GET 0:1#12#0=5", "GET 0:1#12#0=5", "GET ")
	})
	t.Run("BothAheadTheInstancesTooAreForgotten", func(t *testing.T) {
		g, c, ok := writtenAt12(t)

		rctx, _ := store.WithSession(ctx, "products/0:1#999999#0=999999")
		g.fail(http.StatusNotFound, substatusReadSessionNotAvailable)
		if _, err := c.Read(rctx, "p1", "p1"); !domain.IsCode(err, domain.EUNAVAILABLE) {
			t.Fatalf("read no replica can serve: %v, want %s", err, domain.EUNAVAILABLE)
		}
		g.fail(0, "")
		ok(c.Read(ctx, "p1", "p1"))
		wantSent(t, g, "POST ", "GET 0:1#999999#0=999999", "GET 0:1#999999#0=999999",
			"GET 0:1#12#0=5", "GET 0:1#12#0=5", "GET ")
	})
}

// writtenAt12 is the start of most tests here: a fake gateway, its store's
// products container, and item p1 created there at the session token
// 0:1#12#0=5 (the instance's own from then on). ok fails the test on an
// error.
func writtenAt12(t *testing.T) (*gateway, store.Container, func(any, error)) {
	t.Helper()
	ok := noError(t)
	g := newGateway(t)
	c := g.open("").Container("products")
	g.respond("0:1#12#0=5")
	ok(c.Create(t.Context(), "p1", []byte(`{"id":"p1"}`)))
	return g, c, ok
}
