package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
)

// TestSessionsKeepTheLastToken: a token replaces the one held, an empty one
// drops it, a response without the header keeps it; every request carries
// the token held.
func TestSessionsKeepTheLastToken(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	answers := []func(http.Header){
		func(h http.Header) { h.Set("X-Session-Token", "s1.first") },
		func(h http.Header) {},
		func(h http.Header) { h.Set("X-Session-Token", "s1.second") },
		func(h http.Header) { h["X-Session-Token"] = []string{""} },
		func(h http.Header) {},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := len(sent)
		sent = append(sent, r.Header.Get("X-Session-Token"))
		mu.Unlock()
		answers[i](w.Header())
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	}))
	defer srv.Close()

	var s client.Sessions
	c, err := client.NewClientWithResponses(srv.URL, client.WithHTTPClient(srv.Client()), client.WithSessions(&s))
	if err != nil {
		t.Fatal(err)
	}
	for range answers {
		if _, err := client.OK(c.HealthWithResponse(t.Context())); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"", "s1.first", "s1.first", "s1.second", ""}
	if !slices.Equal(sent, want) {
		t.Errorf("sent tokens %q, want %q", sent, want)
	}
	if got := s.Token(); got != "" {
		t.Errorf("held %q after an empty token and no header, want none", got)
	}
	s.Set("s1.saved")
	if r, _ := http.NewRequest("GET", "/", nil); s.Editor()(t.Context(), r) != nil || r.Header.Get("X-Session-Token") != "s1.saved" {
		t.Errorf("Editor sent %q, want the token Set", r.Header.Get("X-Session-Token"))
	}
}

// TestSessionsAreSafeForConcurrentUse runs under -race.
func TestSessionsAreSafeForConcurrentUse(t *testing.T) {
	var s client.Sessions
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := &http.Response{Header: http.Header{"X-Session-Token": {fmt.Sprint("s1.", i)}}}
			req, _ := http.NewRequest("GET", "/", nil)
			s.Keep(r)
			s.Editor()(context.Background(), req)
		})
	}
	wg.Wait()
	if !strings.HasPrefix(s.Token(), "s1.") {
		t.Errorf("held %q", s.Token())
	}
}

// scripted answers each request with the next of its statuses, and counts.
type scripted struct {
	statuses   []int
	retryAfter string
	calls      int
	bodies     []string
}

func (d *scripted) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		d.bodies = append(d.bodies, string(b))
	}
	code := d.statuses[min(d.calls, len(d.statuses)-1)]
	d.calls++
	h := http.Header{}
	if d.retryAfter != "" {
		h.Set("Retry-After", d.retryAfter)
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func TestRetry(t *testing.T) {
	start := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	get, _ := http.NewRequest("GET", "http://shop/v1/categories", nil)
	post := func(key string) *http.Request {
		r, _ := http.NewRequest("POST", "http://shop/v1/checkout", strings.NewReader(`{"paymentMethod":"pm_card_visa"}`))
		if key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		return r
	}
	for _, tc := range []struct {
		name       string
		req        *http.Request
		statuses   []int
		retryAfter string
		policy     client.RetryPolicy
		wantCalls  int
		wantStatus int
		wantWaits  []time.Duration
	}{
		{"a GET after Retry-After seconds", get, []int{429, 503, 200}, "2", client.RetryPolicy{}, 3, 200, []time.Duration{2 * time.Second, 2 * time.Second}},
		{"a GET after Retry-After as an HTTP date", get, []int{503, 200}, start.Add(7 * time.Second).Format(http.TimeFormat), client.RetryPolicy{}, 2, 200, []time.Duration{7 * time.Second}},
		{"without Retry-After, after Wait", get, []int{429, 200}, "", client.RetryPolicy{Wait: 300 * time.Millisecond}, 2, 200, []time.Duration{300 * time.Millisecond}},
		{"no more than Attempts sends", get, []int{429}, "1", client.RetryPolicy{Attempts: 4}, 4, 429, []time.Duration{time.Second, time.Second, time.Second}},
		{"no wait past Within", get, []int{429}, "10", client.RetryPolicy{Attempts: 5, Within: 25 * time.Second}, 3, 429, []time.Duration{10 * time.Second, 10 * time.Second}},
		{"never a POST without Idempotency-Key", post(""), []int{503, 200}, "1", client.RetryPolicy{}, 1, 503, nil},
		{"a POST with Idempotency-Key, body and all", post("k-1"), []int{429, 201}, "1", client.RetryPolicy{}, 2, 201, []time.Duration{time.Second}},
		{"never another status", get, []int{500, 200}, "1", client.RetryPolicy{}, 1, 500, nil},
		{"a Retry-After past any Duration is past Within, not a wait that overflowed", get, []int{429, 200}, "10000000000", client.RetryPolicy{}, 1, 429, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waits, undo := client.FakeClock(start)
			defer undo()
			d := &scripted{statuses: tc.statuses, retryAfter: tc.retryAfter}
			r, err := client.Retry(d, tc.policy).Do(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode != tc.wantStatus || d.calls != tc.wantCalls {
				t.Errorf("answered %d after %d sends, want %d after %d", r.StatusCode, d.calls, tc.wantStatus, tc.wantCalls)
			}
			if !slices.Equal(*waits, tc.wantWaits) {
				t.Errorf("waited %v, want %v", *waits, tc.wantWaits)
			}
			for i, b := range d.bodies {
				if tc.req.Method == "POST" && b != d.bodies[0] {
					t.Errorf("send %d had body %q, want the first's %q", i+1, b, d.bodies[0])
				}
			}
		})
	}

	t.Run("the context ends the wait", func(t *testing.T) {
		_, undo := client.FakeClock(start)
		defer undo()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		req := get.Clone(ctx)
		_, err := client.Retry(&scripted{statuses: []int{429, 200}, retryAfter: "1"}, client.RetryPolicy{}).Do(req)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

// TestPagesStopAtTheLastPage: every item of every page, in order, and no
// call after the page without a continuation.
func TestPagesStopAtTheLastPage(t *testing.T) {
	pages := map[string][]int{"": {1, 2}, "b": {3, 4}, "c": {5}}
	nexts := map[string]string{"": "b", "b": "c", "c": ""}
	var asked []string
	page := func(_ context.Context, continuation *string) ([]int, *string, error) {
		k := ""
		if continuation != nil {
			k = *continuation
		}
		asked = append(asked, k)
		next := nexts[k]
		if next == "" {
			return pages[k], nil, nil
		}
		return pages[k], &next, nil
	}
	var got []int
	for v, err := range client.Pages(t.Context(), page) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if !slices.Equal(got, []int{1, 2, 3, 4, 5}) || !slices.Equal(asked, []string{"", "b", "c"}) {
		t.Errorf("got %v asking %q", got, asked)
	}

	asked = nil
	for v := range client.Pages(t.Context(), page) {
		if v == 3 {
			break
		}
	}
	if !slices.Equal(asked, []string{"", "b"}) {
		t.Errorf("a loop that broke on page 2 asked %q", asked)
	}
}

// TestPagesSurfaceErrors: a page's error is the last pair, and a page that
// gives back its own continuation is an error, not a loop.
func TestPagesSurfaceErrors(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	for v, err := range client.Pages(t.Context(), func(_ context.Context, c *string) ([]int, *string, error) {
		if c != nil {
			return nil, nil, boom
		}
		next := "x"
		return []int{1}, &next, nil
	}) {
		n++
		if n == 1 && (v != 1 || err != nil) || n == 2 && !errors.Is(err, boom) || n > 2 {
			t.Errorf("pair %d: %v, %v", n, v, err)
		}
	}
	if n != 2 {
		t.Errorf("%d pairs, want the item and the error", n)
	}

	var last error
	calls := 0
	for _, err := range client.Pages(t.Context(), func(_ context.Context, c *string) ([]int, *string, error) {
		calls++
		same := "same"
		return []int{calls}, &same, nil
	}) {
		last = err
	}
	if last == nil || calls != 2 {
		t.Errorf("a page repeating its continuation: %d calls, last error %v", calls, last)
	}
}

// TestCategoryProductsPagesTheShop: two at a time, the pager yields what
// one page of a hundred lists, and a category that does not exist is the
// shop's 404 as an *Error.
func TestCategoryProductsPagesTheShop(t *testing.T) {
	c := startShop(t)
	cats, err := client.OK(c.ListCategoriesWithResponse(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	id := cats.JSON200.Items[0].ID
	hundred := 100
	all, err := client.OK(c.ListCategoryProductsWithResponse(t.Context(), id, &client.ListCategoryProductsParams{Limit: &hundred}))
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, p := range all.JSON200.Items {
		want = append(want, p.ID)
	}
	two := 2
	for p, err := range client.CategoryProducts(t.Context(), c, id, client.ListCategoryProductsParams{Limit: &two}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.ID)
	}
	if len(want) < 3 || !slices.Equal(got, want) {
		t.Errorf("paged two at a time: %q, want %q", got, want)
	}

	n := 0
	for _, err := range client.CategoryProducts(t.Context(), c, "no-such-category", client.ListCategoryProductsParams{}) {
		n++
		var e *client.Error
		if !errors.As(err, &e) || e.Type != client.ProblemNotFound {
			t.Errorf("no such category: %v, want a %s", err, client.ProblemNotFound)
		}
	}
	if n != 1 {
		t.Errorf("no such category: %d pairs, want its error alone", n)
	}
}

// TestValue: the body of a success, OK's *Error otherwise.
func TestValue(t *testing.T) {
	c := startShop(t)
	cats, err := client.Value[client.CategoryList](c.ListCategoriesWithResponse(t.Context()))
	if err != nil || len(cats.Items) == 0 {
		t.Fatalf("categories: %v, %v", cats, err)
	}
	_, err = client.Value[client.Product](c.GetProductWithResponse(t.Context(), "no-such-product"))
	var e *client.Error
	if !errors.As(err, &e) || e.Type != client.ProblemNotFound {
		t.Errorf("no such product: %v, want a %s", err, client.ProblemNotFound)
	}
	if _, err := client.Value[client.Product](c.ListCategoriesWithResponse(t.Context())); err == nil {
		t.Error("a category list read as a Product")
	}
}
