package loadbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/cmd/shop/internal/progress"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/store"
)

// `shop bench --screens` measures every screen that renders from one
// store read against a bare net/http handler serving the same bytes: the
// product page's comparison of the default run, screen by screen. The
// shop runs with `shop serve`'s defaults (the embedded store, the read
// cache off) on the catalog of a first start, so that each figure is one
// request's whole path through the shop: its one read included. With
// --revisions, the shops of other git revisions are measured in the same
// rounds, on copies of the same data, for a before and after.

// screensReport is what `shop bench --screens` measured.
type screensReport struct {
	Machine report.Machine `json:"machine"`
	Command string         `json:"command"`
	Target  string         `json:"target"`
	DataSet string         `json:"dataSet"`
	// SetupTime is loading the data, starting the shop and preparing the
	// users; TotalTime the whole run.
	SetupTime string `json:"setupTime"`
	TotalTime string `json:"totalTime"`
	// LoadAfter is the load average when the run ended (the machine's is
	// at its start): other work on a shared machine weighs on every
	// figure but the CPU per request.
	LoadAfter string `json:"loadAfter"`
	// Load is wrk's command line; each screen takes Rounds rounds of the
	// shop and as many of the bare handler, alternating.
	Load   string `json:"load"`
	Rounds int    `json:"rounds"`
	// Rate and Duration are each screen's run at a constant rate (vegeta),
	// which gives its p99.
	Rate     int    `json:"rate"`
	Duration string `json:"duration"`
	// Profiles is the directory the screens' CPU profiles were saved in
	// (--cpuprofile-screens; "" when they were only broken down).
	Profiles string `json:"profiles,omitempty"`
	// Revisions are the other builds measured beside this one, in the
	// same rounds (--revisions).
	Revisions []revision     `json:"revisions,omitempty"`
	Screens   []screenResult `json:"screens"`
	// Goals are this build's.
	Goals []report.Goal `json:"goals"`
}

// screen is one screen of the comparison: a GET of Path, signed in as
// User when it has a token.
type screen struct {
	Name string `json:"name"`
	// ID names the screen's profile file.
	ID   string `json:"id"`
	Path string `json:"path"`
	User string `json:"user,omitempty"`
	// token is User's bearer token ("" for a public screen).
	token string
}

// headers are the headers each request of the screen carries, to the
// shop and to the bare handler alike.
func (s screen) headers() []string {
	if s.token == "" {
		return nil
	}
	return []string{"Authorization: Bearer " + s.token}
}

// screenResult is one screen's comparison.
type screenResult struct {
	screen
	// Bytes and ContentType are the shop's answer, which the bare handler
	// serves; StoreOps and RequestCharge what it said it cost
	// (X-Store-Operations, X-Request-Charge).
	Bytes         int     `json:"bytes"`
	ContentType   string  `json:"contentType"`
	StoreOps      int     `json:"storeOps"`
	RequestCharge float64 `json:"requestCharge"`
	// Shop and Bare are the wrk rounds of each (requests/s, CPU stolen
	// per round; the shop's CPU per request, and where it went when its
	// profile listener answered).
	Shop wrkResult `json:"shop"`
	Bare wrkResult `json:"bare"`
	// Ratio is the shop's median round over the bare handler's.
	Ratio float64 `json:"ratio"`
	// Errors are the answers that were not 2xx and the socket errors
	// wrk reported, over every round of both.
	Errors int `json:"errors"`
	// Revisions are the same screen of each --revisions shop, its rounds
	// alternating with the shop's and the bare handler's.
	Revisions []revisionScreen `json:"revisions,omitempty"`
	// AtRate is the shop at a constant rate: its p99 and success.
	AtRate runResult `json:"atRate"`
	// Profile is the file of its CPU profile ("" without one).
	Profile string `json:"profile,omitempty"`
}

// revisionScreen is a screen of a revision's shop, measured in the same
// rounds as this build's and against the same bare handler, which serves
// this build's answer.
type revisionScreen struct {
	Rev string `json:"rev"`
	// Bytes, StoreOps and RequestCharge are its answer, fetched once;
	// SameBody says whether that answer is byte for byte this build's.
	Bytes         int     `json:"bytes"`
	SameBody      bool    `json:"sameBody"`
	StoreOps      int     `json:"storeOps"`
	RequestCharge float64 `json:"requestCharge"`
	// Shop is its wrk rounds (its Errors among them), Ratio its median
	// round over the bare handler's.
	Shop  wrkResult `json:"shop"`
	Ratio float64   `json:"ratio"`
}

// Defaults of --screens when --products, --reviews, --users, --rate,
// --duration and --closed-loop are not given: the catalog `shop serve`
// seeds on a first start, and runs short enough that the nine screens
// take about two minutes and a half on 2 cores, and about four with one
// --revisions build beside this one (its build included): per screen,
// 3 wrk rounds of each server, the constant-rate run and the profiled
// round, 22 s with one revision.
const (
	screensProducts = 240
	screensReviews  = 1500
	screensUsers    = 0
	screensRate     = 1000
	screensDuration = 2 * time.Second
	screensRound    = 2 * time.Second
)

// screensWord is the search of the search screen: a word of the sample
// catalog that fills a page (34 products of the first start's catalog).
const screensWord = "coffee"

// screensOrders is how many orders the buyer places before the runs, and
// screensCartLines the lines of the cart user's cart.
const (
	screensOrders    = 3
	screensCartLines = 3
)

// goalRatio is what every one-read screen should keep of the bare
// handler's throughput.
const goalRatio = 0.5

// runScreens builds the --revisions shops, prepares the users on a shop
// of this build (setUpScreens), starts this build and each revision on a
// copy of the data it left, then measures each screen in turn.
func runScreens(ctx context.Context, o benchOptions) (screensReport, error) {
	start := time.Now()
	round := max(o.closedTime, time.Second).Round(time.Second)
	rep := screensReport{
		Machine: report.ThisMachine(),
		Load:    fmt.Sprintf("wrk -t%d -c%d -d%s URL", wrkThreads, wrkConnections, round),
		Rounds:  wrkRounds, Rate: o.rate, Duration: o.duration.String(),
		Profiles: o.screenProfiles,
	}
	wrk := findWrk()
	if wrk == "" {
		return rep, errors.New("shop bench --screens loads the shop with wrk, which is not on PATH")
	}
	bin, err := o.shopBinary()
	if err != nil {
		return rep, err
	}
	if o.screenProfiles != "" {
		if err := os.MkdirAll(o.screenProfiles, 0o755); err != nil {
			return rep, err
		}
	}
	revs, removeRevs, err := buildRevisions(ctx, o.revisions)
	if err != nil {
		return rep, err
	}
	defer removeRevs()
	rep.Revisions = revs
	data, err := prepareBenchData(ctx, o, progress.OnStderr("loading the sample data"))
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(data.dir)
	setUp, screens, err := setUpScreens(ctx, bin, data)
	if err != nil {
		return rep, fmt.Errorf("preparing the screens: %w", err)
	}
	defer os.RemoveAll(setUp.dir)
	shop, err := startBenchShop(ctx, "this build", bin, setUp, 0)
	if err != nil {
		return rep, err
	}
	defer shop.close()
	rep.Target, rep.DataSet = shop.desc, data.dataSet
	var others []*benchShop
	for _, r := range revs {
		s, err := startBenchShop(ctx, "revision "+r.Rev, r.bin, setUp, 0)
		if err != nil {
			return rep, fmt.Errorf("revision %s: %w", r.Rev, err)
		}
		defer s.close()
		others = append(others, s)
	}
	rep.SetupTime = time.Since(start).Round(time.Millisecond).String()
	for _, s := range screens {
		if o.screenOnly != "" && !strings.Contains(strings.ToLower(s.Name), strings.ToLower(o.screenOnly)) {
			continue
		}
		r, err := measureScreen(ctx, wrk, shop, others, s, o, round)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", s.Name, err)
		}
		rep.Screens = append(rep.Screens, r)
		for _, sh := range append([]*benchShop{shop}, others...) {
			if err := sh.child.alive(); err != nil {
				return rep, err
			}
		}
	}
	rep.Goals = screenGoals(rep.Screens)
	rep.TotalTime = time.Since(start).Round(time.Second).String()
	rep.LoadAfter = report.ThisMachine().LoadAverage
	return rep, nil
}

// setUpScreens starts this build on a copy of data, prepares the screens'
// users (prepareScreens) and stops it, and returns the data it left, its
// directory the caller's to remove. Every shop of the run starts on a copy
// of that: the same carts, orders and order ids, and the same tokens (the
// JWT secret is kept in the data directory), so each screen is the same
// request to every build, and each build reads the same documents.
func setUpScreens(ctx context.Context, bin string, data benchData) (benchData, []screen, error) {
	shop, err := startBenchShop(ctx, "this build (setting up)", bin, data, 0)
	if err != nil {
		return benchData{}, nil, err
	}
	c, err := newBenchClient(shop.url)
	if err != nil {
		shop.close()
		return benchData{}, nil, err
	}
	screens, err := prepareScreens(ctx, c, shop.settle)
	if err == nil {
		err = shop.settle(ctx)
	}
	if err != nil {
		shop.close()
		return benchData{}, nil, err
	}
	return shop.stopKeepingData(), screens, nil
}

// screenSubjects are what the screens address: the most populous
// category, the product page, one of the buyer's orders, and the tokens
// of the users signed in.
type screenSubjects struct {
	category, product, order string
	// cart has screensCartLines lines in the cart, buyer placed
	// screensOrders orders, newcomer nothing.
	cart, buyer, newcomer string
}

// Users of the signed-in screens.
const (
	screensCartUser     = "screens-cart"
	screensBuyer        = "screens-buyer"
	screensNewcomerUser = "screens-newcomer"
)

// screenList is every screen that renders from one read, as the
// generated client addresses it at base (the paths, which the bare
// handler is sent as well).
func screenList(base string, s screenSubjects) ([]screen, error) {
	limit := store.DefaultPageSize
	type built struct {
		name, id, user, token string
		req                   func() (*http.Request, error)
	}
	all := []built{
		{"home", "home", "", "", func() (*http.Request, error) { return client.NewListCategoriesRequest(base) }},
		{"category page", "category", "", "", func() (*http.Request, error) {
			return client.NewListCategoryProductsRequest(base, s.category, &client.ListCategoryProductsParams{Limit: &limit})
		}},
		{"search", "search", "", "", func() (*http.Request, error) {
			return client.NewSearchProductsRequest(base, &client.SearchProductsParams{Q: screensWord})
		}},
		{"product page", "product", "", "", func() (*http.Request, error) { return client.NewGetProductRequest(base, s.product) }},
		{fmt.Sprintf("cart (%d lines)", screensCartLines), "cart", screensCartUser, s.cart, func() (*http.Request, error) { return client.NewGetCartRequest(base) }},
		{fmt.Sprintf("order history (%d orders)", screensOrders), "orders", screensBuyer, s.buyer, func() (*http.Request, error) { return client.NewListOrdersRequest(base, nil) }},
		{"order history (none yet)", "orders-none", screensNewcomerUser, s.newcomer, func() (*http.Request, error) { return client.NewListOrdersRequest(base, nil) }},
		{"order detail", "order", screensBuyer, s.buyer, func() (*http.Request, error) { return client.NewGetOrderRequest(base, s.order) }},
		{fmt.Sprintf("my account (%d orders)", screensOrders), "summary", screensBuyer, s.buyer, func() (*http.Request, error) { return client.NewGetMySummaryRequest(base) }},
	}
	screens := make([]screen, len(all))
	for i, b := range all {
		req, err := b.req()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		screens[i] = screen{Name: b.name, ID: b.id, Path: req.URL.RequestURI(), User: b.user, token: b.token}
	}
	return screens, nil
}

// prepareScreens finds the category and the product page, fills one
// user's cart, has another place screensOrders orders (each checkout
// carried out by the feed workers before the next, settle), and checks
// that each screen shows what its name says.
func prepareScreens(ctx context.Context, c benchClient, settle func(context.Context) error) ([]screen, error) {
	cat, err := c.discover(ctx)
	if err != nil {
		return nil, err
	}
	category, _, err := hotTargets(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(cat.inStock) < screensCartLines+screensOrders {
		return nil, fmt.Errorf("%d products listed in stock, want %d (the cart's lines and the orders' products)", len(cat.inStock), screensCartLines+screensOrders)
	}
	s := screenSubjects{category: category, product: cat.page}
	for _, u := range []struct {
		id  string
		tok *string
	}{{screensCartUser, &s.cart}, {screensBuyer, &s.buyer}, {screensNewcomerUser, &s.newcomer}} {
		if *u.tok, err = c.token(ctx, u.id); err != nil {
			return nil, err
		}
	}
	for _, p := range cat.inStock[:screensCartLines] {
		if err := c.putCartLine(ctx, s.cart, p, 1); err != nil {
			return nil, err
		}
	}
	for i, p := range cat.inStock[screensCartLines : screensCartLines+screensOrders] {
		if err := c.putCartLine(ctx, s.buyer, p, 1); err != nil {
			return nil, err
		}
		if _, err := call(ctx, func() (*client.CheckoutResponse, error) {
			return c.api.CheckoutWithResponse(ctx, &client.CheckoutParams{IdempotencyKey: fmt.Sprintf("screens-%d", i)},
				client.CheckoutRequest{ShippingAddress: benchAddress, PaymentMethod: "pm_card_visa"}, client.Bearer(s.buyer))
		}); err != nil {
			return nil, fmt.Errorf("checkout %d: %w", i+1, err)
		}
		// The order's effects (the cart emptied, the stock taken) are
		// the feed workers' to finish: done before the next line.
		if err := settle(ctx); err != nil {
			return nil, err
		}
	}
	orders, err := call(ctx, func() (*client.ListOrdersResponse, error) {
		return c.api.ListOrdersWithResponse(ctx, nil, client.Bearer(s.buyer))
	})
	if err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	if n := len(orders.JSON200.Items); n != screensOrders {
		return nil, fmt.Errorf("the buyer has %d orders, want %d", n, screensOrders)
	}
	s.order = orders.JSON200.Items[0].ID
	cart, err := call(ctx, func() (*client.GetCartResponse, error) { return c.api.GetCartWithResponse(ctx, client.Bearer(s.cart)) })
	if err != nil {
		return nil, fmt.Errorf("cart: %w", err)
	}
	if n := len(cart.JSON200.Items); n != screensCartLines {
		return nil, fmt.Errorf("the cart has %d lines, want %d", n, screensCartLines)
	}
	found, err := call(ctx, func() (*client.SearchProductsResponse, error) {
		return c.api.SearchProductsWithResponse(ctx, &client.SearchProductsParams{Q: screensWord})
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if n := len(found.JSON200.Items); n < store.DefaultPageSize {
		return nil, fmt.Errorf("q=%s finds %d products, want a full page of %d (a larger catalog: --products)", screensWord, n, store.DefaultPageSize)
	}
	return screenList(c.base, s)
}

// screenAnswer is the shop's answer of a screen, fetched once.
type screenAnswer struct {
	body          []byte
	contentType   string
	storeOps      int
	requestCharge float64
}

// fetchScreen GETs url with the headers ("Name: value") and returns the
// answer, an error unless it is a 200.
func fetchScreen(ctx context.Context, url string, headers []string) (screenAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return screenAnswer{}, err
	}
	req.Header = parseHeaders(headers)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return screenAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return screenAnswer{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return screenAnswer{}, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	a := screenAnswer{body: body, contentType: resp.Header.Get("Content-Type")}
	a.storeOps, _ = strconv.Atoi(resp.Header.Get("X-Store-Operations"))
	a.requestCharge, _ = strconv.ParseFloat(resp.Header.Get("X-Request-Charge"), 64)
	return a, nil
}

// parseHeaders makes an http.Header of "Name: value" lines (wrk's -H).
func parseHeaders(lines []string) http.Header {
	h := http.Header{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

// measureScreen fetches the screen's answer from this build's shop and
// from each other one, serves this build's from a bare handler, runs the
// wrk rounds on every shop and the bare handler, alternating, then this
// build's shop at a constant rate, and one more wrk round of it under the
// profiler (where its CPU went; the profile saved with
// --cpuprofile-screens).
func measureScreen(ctx context.Context, wrk string, shop *benchShop, others []*benchShop, s screen, o benchOptions, round time.Duration) (screenResult, error) {
	r := screenResult{screen: s}
	shopURL := shop.url + s.Path
	a, err := fetchScreen(ctx, shopURL, s.headers())
	if err != nil {
		return r, err
	}
	r.Bytes, r.ContentType, r.StoreOps, r.RequestCharge = len(a.body), a.contentType, a.storeOps, a.requestCharge
	targets := []wrkTarget{{name: s.Name, url: shopURL, child: shop.child, headers: s.headers()}}
	for _, other := range others {
		b, err := fetchScreen(ctx, other.url+s.Path, s.headers())
		if err != nil {
			return r, fmt.Errorf("%s: %w", other.name, err)
		}
		r.Revisions = append(r.Revisions, revisionScreen{
			Rev: strings.TrimPrefix(other.name, "revision "), Bytes: len(b.body), SameBody: bytes.Equal(b.body, a.body),
			StoreOps: b.storeOps, RequestCharge: b.requestCharge,
		})
		targets = append(targets, wrkTarget{name: other.name, url: other.url + s.Path, child: other.child, headers: s.headers()})
	}
	bare, closeBare, err := serveBaseline(a.body, a.contentType)
	if err != nil {
		return r, err
	}
	defer closeBare()
	targets = append(targets, wrkTarget{name: "bare handler", url: bare + s.Path, headers: s.headers()})
	ext, err := runExternal(ctx, wrk, targets, wrkConnections, wrkRounds, round)
	if err != nil {
		return r, err
	}
	r.Shop, r.Bare = ext.Targets[0], ext.Targets[len(ext.Targets)-1]
	r.Errors = r.Shop.Errors + r.Bare.Errors
	r.Ratio = medianRatio(r.Shop, r.Bare)
	for i := range r.Revisions {
		rs := &r.Revisions[i]
		rs.Shop = ext.Targets[1+i]
		rs.Ratio = medianRatio(rs.Shop, r.Bare)
	}
	r.AtRate, _ = attack(ctx, load{name: s.Name, rate: o.rate, duration: o.duration}, screenTarget(shopURL, s.headers()), nil)
	if shop.child.pprof == "" {
		return r, nil
	}
	p, err := profileDuring(ctx, wrk, targets[0], wrkConnections, round)
	if err != nil {
		return r, err
	}
	if o.screenProfiles != "" {
		r.Profile = filepath.Join(o.screenProfiles, s.ID+".pb.gz")
		if err := writeProfile(p, r.Profile); err != nil {
			return r, err
		}
	}
	b := breakDown(p, r.Shop.CPUMicrosPerRequest)
	r.Shop.Breakdown = &b
	return r, nil
}

// medianRatio is t's median round over the bare handler's (0 without
// one).
func medianRatio(t, bare wrkResult) float64 {
	if bare.Median <= 0 {
		return 0
	}
	return report.Round2(t.Median / bare.Median)
}

// screenTarget sends the one request of a screen, again and again.
func screenTarget(url string, headers []string) vegeta.Targeter {
	h := parseHeaders(headers)
	return func(t *vegeta.Target) error {
		*t = vegeta.Target{Method: http.MethodGet, URL: url, Header: h}
		return nil
	}
}

// screenGoals: every one-read screen keeps at least goalRatio of the bare
// handler's throughput, every answer 2xx.
func screenGoals(screens []screenResult) []report.Goal {
	goals := make([]report.Goal, len(screens))
	for i, s := range screens {
		goals[i] = report.Goal{
			Name: fmt.Sprintf("%s `%s`: throughput / bare handler (wrk, median of %d rounds each), every answer 2xx", s.Name, s.Path, len(s.Shop.Rounds)),
			Want: fmt.Sprintf(">= %.1f", goalRatio), Got: s.Ratio,
			Met: s.Ratio >= goalRatio && s.Errors == 0 && len(s.Shop.Rounds) > 0,
		}
	}
	return goals
}
