package loadbench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// TestScreenList: every one-read screen, addressed as the issue measured
// it, the signed-in ones with their user's token and the public ones
// with none; the ids name distinct profile files.
func TestScreenList(t *testing.T) {
	screens, err := screenList("http://127.0.0.1:8080", screenSubjects{
		category: "books", product: "p-0147", order: "o-1",
		cart: "t-cart", buyer: "t-buyer", newcomer: "t-new",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ id, path, token string }{
		{"home", "/v1/categories", ""},
		{"category", "/v1/categories/books/products?limit=20", ""},
		{"search", "/v1/search?q=" + screensWord, ""},
		{"product", "/v1/products/p-0147", ""},
		{"cart", "/v1/cart", "t-cart"},
		{"orders", "/v1/orders", "t-buyer"},
		{"orders-none", "/v1/orders", "t-new"},
		{"order", "/v1/orders/o-1", "t-buyer"},
		{"summary", "/v1/me/summary", "t-buyer"},
	}
	if len(screens) != len(want) {
		t.Fatalf("%d screens, want %d: %+v", len(screens), len(want), screens)
	}
	for i, w := range want {
		s := screens[i]
		if s.ID != w.id || s.Path != w.path || s.token != w.token || (s.User == "") != (w.token == "") {
			t.Errorf("screen %d = %+v (token %q), want id %s, path %s, token %q", i, s, s.token, w.id, w.path, w.token)
		}
		if h := s.headers(); (w.token == "") != (len(h) == 0) || (len(h) == 1 && h[0] != "Authorization: Bearer "+w.token) {
			t.Errorf("%s: headers %q, want the bearer token %q", s.ID, h, w.token)
		}
	}
}

// TestBaselineServesTheShopsAnswer: the bare handler answers any path
// with exactly the bytes and the Content-Type it was given.
func TestBaselineServesTheShopsAnswer(t *testing.T) {
	body := []byte(`{"items":[{"id":"p-0001"}],"continuation":null}`)
	const ct = "application/problem+json; charset=utf-8"
	base, stop, err := serveBaseline(body, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	a, err := fetchScreen(context.Background(), base+"/v1/orders/o-1?limit=20", []string{"Authorization: Bearer t"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.body, body) || a.contentType != ct {
		t.Errorf("bare handler answered %q with Content-Type %q, want %q with %q", a.body, a.contentType, body, ct)
	}
}

// TestFetchScreenRefusesAnythingButOK: a screen whose answer is not a
// 200 is not measured (its bytes would not be the screen's).
func TestFetchScreenRefusesAnythingButOK(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Store-Operations", "1")
		w.Header().Set("X-Request-Charge", "1.09")
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	if _, err := fetchScreen(context.Background(), srv.URL, []string{"Authorization: Bearer bad"}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a 401: err = %v, want it refused", err)
	}
	a, err := fetchScreen(context.Background(), srv.URL, []string{"Authorization: Bearer good"})
	if err != nil || string(a.body) != "{}" || a.storeOps != 1 || a.requestCharge != 1.09 {
		t.Errorf("a 200: %+v, %v; want its body and its cost", a, err)
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{30, 10, 20}, 20},
		{[]float64{40, 10, 30, 20}, 25},
	} {
		in := append([]float64(nil), tt.in...)
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("median reordered its input: %v, was %v", tt.in, in)
		}
	}
}

// TestRunExternalSendsTheHeaders: wrk sends a target's headers with
// every request, each round's CPU stolen is kept, and an answer that is
// not 2xx is counted as an error.
func TestRunExternalSendsTheHeaders(t *testing.T) {
	wrk := findWrk()
	if wrk == "" {
		t.Skip("wrk is not on PATH")
	}
	var without atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			without.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	ctx := context.Background()
	res, err := runExternal(ctx, wrk, []wrkTarget{{name: "signed in", url: srv.URL + "/v1/cart", headers: []string{"Authorization: Bearer t"}}}, 2, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Targets[0]
	if res.Errors != 0 || r.Errors != 0 || without.Load() != 0 || r.Median <= 0 || len(r.Rounds) != 1 || len(r.StolenRounds) != 1 {
		t.Errorf("with the header: %d errors, %d requests without it, %+v; want none, a median and one stolen figure per round", res.Errors, without.Load(), r)
	}
	res, err = runExternal(ctx, wrk, []wrkTarget{{name: "signed out", url: srv.URL + "/v1/cart"}}, 2, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors == 0 || res.Targets[0].Errors != res.Errors {
		t.Errorf("401s: %d errors, %d of the target's; want wrk's non-2xx answers, the target's", res.Errors, res.Targets[0].Errors)
	}
}

func TestScreenGoals(t *testing.T) {
	result := func(ratio float64, errors int) screenResult {
		return screenResult{screen: screen{Name: "home", Path: "/v1/categories"}, Ratio: ratio, Errors: errors,
			Shop: wrkResult{Rounds: []float64{1, 2, 3}}}
	}
	goals := screenGoals([]screenResult{result(0.5, 0), result(0.49, 0), result(0.9, 3)})
	for i, met := range []bool{true, false, false} {
		if goals[i].Met != met || goals[i].Want != ">= 0.5" || !strings.Contains(goals[i].Name, "`/v1/categories`") {
			t.Errorf("goal %d = %+v, want met %v", i, goals[i], met)
		}
	}
}

// sampleScreens is a report as runScreens returns it, of two screens.
func sampleScreens() screensReport {
	return screensReport{
		Command: "go run ./cmd/shop bench --screens", Target: "shop serve", DataSet: "sample data: 240 products",
		SetupTime: "1s", TotalTime: "2m20s", LoadAfter: "1.50 1.20 1.00", Load: "wrk -t2 -c32 -d2s URL", Rounds: 3, Rate: 1000, Duration: "3s",
		Screens: []screenResult{{
			screen: screen{Name: "home", ID: "home", Path: "/v1/categories"}, Bytes: 4778, ContentType: "application/json", StoreOps: 1, RequestCharge: 1.36,
			Shop:  wrkResult{Rounds: []float64{10000, 12000, 11000}, Median: 11000, CPUMicrosPerRequest: 88.9, StolenRounds: []float64{0.1, 0, 0.5}},
			Bare:  wrkResult{Rounds: []float64{40000, 44000, 42000}, Median: 42000, StolenRounds: []float64{0, 0.2, 0}},
			Ratio: 0.26, AtRate: runResult{P99Ms: 2.72, Success: 1},
		}, {
			screen: screen{Name: "cart (3 lines)", ID: "cart", Path: "/v1/cart", User: screensCartUser}, Bytes: 704, StoreOps: 1, RequestCharge: 1,
			Shop:  wrkResult{Rounds: []float64{27000, 28000, 29000}, Median: 28000, CPUMicrosPerRequest: 60.1, StolenRounds: []float64{0, 0, 0}},
			Bare:  wrkResult{Rounds: []float64{50000, 56000, 54000}, Median: 54000, StolenRounds: []float64{0, 0, 0}},
			Ratio: 0.52, Errors: 2, AtRate: runResult{P99Ms: 0.55, Success: 0.999},
		}},
	}
}

// TestScreensMarkdown: a row per screen with its figures, the rounds of
// both servers and each round's CPU stolen, and a goal per screen.
func TestScreensMarkdown(t *testing.T) {
	r := sampleScreens()
	r.Goals = screenGoals(r.Screens)
	var b strings.Builder
	writeScreensMarkdown(&b, r)
	md := b.String()
	for _, want := range []string{
		"| home | `GET /v1/categories` | 4778 | 1, 1.36 | 11000 (10000, 12000, 11000) | 42000 (40000, 44000, 42000) | **0.26** | 88.9 µs | 2.72 ms (1.0000) | 0.1, 0.0, 0.5 / 0.0, 0.2, 0.0 |",
		"| cart (3 lines) | `GET /v1/cart`, signed in as screens-cart | 704 |",
		"2 answers in all that were not 2xx",
		"| p99 at 1000/s (success) |",
		"1.50 1.20 1.00 at the end",
		"| home `/v1/categories`: throughput / bare handler (wrk, median of 3 rounds each), every answer 2xx | >= 0.5 | 0.26 | MISSED |",
		"| cart (3 lines) `/v1/cart`: throughput / bare handler (wrk, median of 3 rounds each), every answer 2xx | >= 0.5 | 0.52 | MISSED |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Where each screen's CPU goes") || strings.Contains(md, "| build |") || strings.Contains(md, "revision") {
		t.Errorf("a breakdown without profiles, or a build column without revisions:\n%s", md)
	}
	r.Screens[0].Shop.Breakdown = &breakdown{Seconds: 1, Parts: []share{{Part: "router (chi)", Percent: 10, MicrosPerRequest: 8.89}}}
	b.Reset()
	writeScreensMarkdown(&b, r)
	md = b.String()
	if !strings.Contains(md, "| part | home |\n|---|--:|\n| router (chi) | 10.0% (8.9 µs) |\n| **total** | 88.9 µs |") {
		t.Errorf("breakdown of the profiled screen missing:\n%s", md)
	}
	if !strings.Contains(md, "not counted above. Each sample") {
		t.Errorf("profiles kept in memory only, yet the breakdown names a directory:\n%s", md)
	}
	r.Profiles = "profiles"
	b.Reset()
	writeScreensMarkdown(&b, r)
	if md := b.String(); !strings.Contains(md, "not counted above, saved in profiles as SCREEN.pb.gz") {
		t.Errorf("profiles saved, yet the breakdown does not say where:\n%s", md)
	}
}

// sampleScreensWithRevision is sampleScreens with a revision measured
// beside this build: the same home page, and a cart whose answer differs
// and which had an error.
func sampleScreensWithRevision() screensReport {
	r := sampleScreens()
	r.Revisions = []revision{{Rev: "d2aeb27", Subject: "README: the package table"}}
	r.Screens[0].Revisions = []revisionScreen{{Rev: "d2aeb27", Bytes: 4778, SameBody: true, StoreOps: 1, RequestCharge: 1.36, Ratio: 0.21,
		Shop: wrkResult{Rounds: []float64{9000, 8800, 9100}, Median: 9000, CPUMicrosPerRequest: 120.5, StolenRounds: []float64{0, 0.3, 0}}}}
	r.Screens[1].Revisions = []revisionScreen{{Rev: "d2aeb27", Bytes: 690, StoreOps: 1, RequestCharge: 1, Ratio: 0.41,
		Shop: wrkResult{Rounds: []float64{22000, 22500, 21000}, Median: 22000, CPUMicrosPerRequest: 75, StolenRounds: []float64{0, 0, 0}, Errors: 1}}}
	return r
}

// TestScreensMarkdownWithRevisions: with revisions, each screen has a row
// per build, named in a column of its own, each revision's with its own
// figures and its ratio to the same bare handler, its bytes said to
// differ when its answer is not this build's; the p99 and the goals stay
// this build's, the errors count every server's.
func TestScreensMarkdownWithRevisions(t *testing.T) {
	r := sampleScreensWithRevision()
	r.Goals = screenGoals(r.Screens)
	var b strings.Builder
	writeScreensMarkdown(&b, r)
	md := b.String()
	for _, want := range []string{
		"- revision d2aeb27 (README: the package table): built from this repository's history",
		"| screen | request | build | body bytes | store ops, RU | shop req/s: median (rounds) | bare req/s: median (rounds) | ratio | shop CPU per request | p99 at 1000/s (success) | CPU stolen % per round, shop / bare |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
		"| home | `GET /v1/categories` | this build | 4778 | 1, 1.36 | 11000 (10000, 12000, 11000) | 42000 (40000, 44000, 42000) | **0.26** | 88.9 µs | 2.72 ms (1.0000) | 0.1, 0.0, 0.5 / 0.0, 0.2, 0.0 |\n" +
			"|  |  | revision d2aeb27 | 4778 | 1, 1.36 | 9000 (9000, 8800, 9100) |  | **0.21** | 120.5 µs | - | 0.0, 0.3, 0.0 |\n",
		"| cart (3 lines) | `GET /v1/cart`, signed in as screens-cart | this build | 704 |",
		"|  |  | revision d2aeb27 | 690 (differs) | 1, 1.00 | 22000 (22000, 22500, 21000) |  | **0.41** | 75.0 µs | - | 0.0, 0.0, 0.0 |\n",
		"3 answers in all that were not 2xx",
		"| home `/v1/categories`: throughput / bare handler (wrk, median of 3 rounds each), every answer 2xx | >= 0.5 | 0.26 | MISSED |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if len(r.Goals) != len(r.Screens) {
		t.Errorf("%d goals, want one per screen, this build's: %+v", len(r.Goals), r.Goals)
	}
}

// TestScreensTextWithRevisions: the terminal's table has the same rows,
// a revision's errors its own.
func TestScreensTextWithRevisions(t *testing.T) {
	r := sampleScreensWithRevision()
	var b strings.Builder
	writeScreensText(&b, r)
	text := b.String()
	var rows []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "revision d2aeb27") || strings.Contains(line, "this build ") {
			rows = append(rows, strings.Join(strings.Fields(line), " "))
		}
	}
	want := []string{
		"revision d2aeb27: README: the package table",
		"home GET /v1/categories this build 4778 1, 1.36 11000 (10000, 12000, 11000) 42000 (40000, 44000, 42000) 0.26 88.9 2.72 ms (1.0000) 0 0.1, 0.0, 0.5 / 0.0, 0.2, 0.0",
		"revision d2aeb27 4778 1, 1.36 9000 (9000, 8800, 9100) 0.21 120.5 - 0 0.0, 0.3, 0.0",
		"cart (3 lines) GET /v1/cart, signed in as screens-cart this build 704 1, 1.00 28000 (27000, 28000, 29000) 54000 (50000, 56000, 54000) 0.52 60.1 0.55 ms (0.9990) 2 0.0, 0.0, 0.0 / 0.0, 0.0, 0.0",
		"revision d2aeb27 690 (differs) 1, 1.00 22000 (22000, 22500, 21000) 0.41 75.0 - 1 0.0, 0.0, 0.0",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows:\n%s\nwant:\n%s\nin:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"), text)
	}
}

// TestScreensSectionOfTheDoc: --write-docs writes the screens' own
// section and leaves the bench's alone.
func TestScreensSectionOfTheDoc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.md")
	bench := "<!-- begin: shop bench (generated) -->\nbench figures\n<!-- end: shop bench -->\n"
	before := "# Performance\n\n" + bench + "\n<!-- begin: shop bench screens (generated) -->\nold figures\n<!-- end: shop bench screens -->\n\nprose after\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sampleScreens()
	var out bytes.Buffer
	if err := report.Write(&out, r, report.Output{Docs: path}, "bench screens",
		func(w io.Writer) { writeScreensMarkdown(w, r) }, func(w io.Writer) { writeScreensText(w, r) }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if strings.Contains(doc, "old figures") || !strings.Contains(doc, bench) ||
		!strings.Contains(doc, "<!-- begin: shop bench screens (generated) -->\n## Every one-read screen") ||
		!strings.HasSuffix(doc, "<!-- end: shop bench screens -->\n\nprose after\n") {
		t.Errorf("doc after --write-docs:\n%s", doc)
	}
}

// TestScreensFlags: the profiles need the screens, and the screens start
// their own shop with its defaults; flags not given take the screens'
// defaults, flags given are kept.
func TestScreensFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--cpuprofile-screens", t.TempDir()},
		{"--screens", "--url", "http://127.0.0.1:1"},
		{"--screens", "--hotspots"},
		{"--screens", "--throughput", "400"},
	} {
		if err := Run(context.Background(), args, noEnv, io.Discard); err == nil {
			t.Errorf("shop bench %s: no error, want a refusal", strings.Join(args, " "))
		}
	}
	o := benchOptions{products: 10000, reviews: 20000, users: 10000, rate: 5000, duration: 5 * time.Second, closedTime: 3 * time.Second}
	o.screensDefaults(map[string]bool{"products": true, "closed-loop": true})
	want := benchOptions{products: 10000, reviews: screensReviews, users: screensUsers, rate: screensRate, duration: screensDuration, closedTime: 3 * time.Second}
	if o.products != want.products || o.reviews != want.reviews || o.users != want.users || o.rate != want.rate || o.duration != want.duration || o.closedTime != want.closedTime {
		t.Errorf("options = %+v, want %+v", o, want)
	}
}

// TestScreensSetUp prepares the screens on a shop of their own
// (setUpScreens), then starts the shop measured on a copy of the data it
// left: each screen answers 200 to its user there, its token and its
// order id good on the copy, and a signed-in one refuses a request
// without the token. The runs are not made here (they take minutes):
// `shop bench --screens` makes them.
func TestScreensSetUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the shop: skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "shop")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/reference-shop/shop/cmd/shop").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	o := benchOptions{}
	o.screensDefaults(nil)
	data, err := prepareBenchData(ctx, o, func(int, int) {})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(data.dir)
	setUp, screens, err := setUpScreens(ctx, bin, data)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(setUp.dir)
	shop, err := startBenchShop(ctx, "this build", bin, setUp, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer shop.close()
	for _, s := range screens {
		a, err := fetchScreen(ctx, shop.url+s.Path, s.headers())
		if err != nil || len(a.body) == 0 || a.storeOps != 1 {
			t.Errorf("%s: %d bytes, %d store ops, %v; want a 200 of one read", s.Name, len(a.body), a.storeOps, err)
		}
		if s.User != "" {
			if _, err := fetchScreen(ctx, shop.url+s.Path, nil); err == nil {
				t.Errorf("%s: answered without the token", s.Name)
			}
		}
	}
}

// TestCopyOfTheDataKeepsEveryFile: a shop started on a copy of another's
// data directory has all of it: the store's file, and the JWT secret and
// the payments the shop keeps beside it, so that the tokens and the
// orders of the setup are good on every copy.
func TestCopyOfTheDataKeepsEveryFile(t *testing.T) {
	d := benchData{dir: t.TempDir()}
	files := map[string]string{"shop.db": "store", "jwt.secret": "secret", "payments.db": "payments"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(d.dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := d.copyTo()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != body {
			t.Errorf("%s in the copy: %q, %v; want %q", name, b, err, body)
		}
	}
}
