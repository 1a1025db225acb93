package stripe_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/domain/payments/stripe"
)

const installStripeMock = "go install github.com/stripe/stripe-mock@latest"

// TestOnStripeMock runs the adapter against stripe-mock, which checks
// every request against Stripe's OpenAPI description and answers
// fixtures (see the package doc for what that does and does not show).
func TestOnStripeMock(t *testing.T) {
	base := stripeMock(t)

	t.Run("Contract", func(t *testing.T) {
		paymentstest.Run(t, func(t *testing.T) payments.Provider {
			return stripe.New("sk_test_mock", stripe.WithBaseURL(base))
		}, paymentstest.Options{Stateless: true})
	})

	// AuthorizeRequestAccepted: stripe-mock accepts Authorize's request
	// as Stripe's description has it, and reads its parameters: it
	// answers them back (amount, capture_method) in the fixture.
	t.Run("AuthorizeRequestAccepted", func(t *testing.T) {
		rec := &recorder{}
		p := stripe.New("sk_test_mock", stripe.WithBaseURL(base), stripe.WithHTTPClient(&http.Client{Transport: rec, Timeout: stripe.DefaultTimeout}))
		if _, err := p.Authorize(ctx, visa); err != nil {
			t.Fatalf("Authorize: %v", err)
		}
		exchanges := rec.all()
		if len(exchanges) != 1 || exchanges[0].status != http.StatusOK {
			t.Fatalf("exchanges %+v, want one answered 200", exchanges)
		}
		form := exchanges[0].form
		for k, v := range map[string]string{"confirm": "true", "capture_method": "manual", "payment_method": "pm_card_visa"} {
			if got := form.Get(k); got != v {
				t.Errorf("sent %s = %q, want %q", k, got, v)
			}
		}
		var answer struct {
			Amount        int64  `json:"amount"`
			CaptureMethod string `json:"capture_method"`
			PaymentMethod string `json:"payment_method"`
		}
		if err := json.Unmarshal(exchanges[0].body, &answer); err != nil {
			t.Fatal(err)
		}
		if answer.Amount != visa.AmountCents || answer.CaptureMethod != "manual" || answer.PaymentMethod != visa.PaymentMethod {
			t.Errorf("stripe-mock answered %+v, want the amount, capture method and payment method sent", answer)
		}
	})

	// MockRefusesAMalformedRequest: what "accepted" above is worth:
	// stripe-mock refuses a parameter value Stripe's description does not
	// allow.
	t.Run("MockRefusesAMalformedRequest", func(t *testing.T) {
		form := url.Values{"amount": {"2599"}, "currency": {"usd"}, "capture_method": {"later"}}
		req, err := http.NewRequest(http.MethodPost, base+"/v1/payment_intents", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("sk_test_mock", "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("capture_method=later answered %d, want 400", resp.StatusCode)
		}
	})
}

// stripeMock starts stripe-mock on a loopback port the system picks and
// returns its base URL once it answers; it is killed when t ends. Without
// the binary the test is skipped, saying how to install it.
func stripeMock(t *testing.T) string {
	t.Helper()
	bin := findStripeMock()
	if bin == "" {
		t.Skipf("stripe-mock is not installed; install it with `%s` (it lands in $(go env GOPATH)/bin)", installStripeMock)
	}
	// -http-addr alone still starts HTTPS on the default port 12112 (only
	// -http, -http-port or -http-unix turn it off), which a second run
	// would find taken: give it a port of its own too.
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	pw.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})

	// It prints "Listening for HTTP at address: 127.0.0.1:PORT".
	var mu sync.Mutex
	var log strings.Builder
	addr := make(chan string, 1)
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			mu.Unlock()
			if a, ok := strings.CutPrefix(line, "Listening for HTTP at address: "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	output := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }

	var base string
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("stripe-mock exited before listening:\n%s", output())
		}
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("stripe-mock did not listen within 30 s:\n%s", output())
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/v1/payment_intents/pi_ready")
		if err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock at %s does not answer: %v\n%s", base, err, output())
		}
	}
}

// findStripeMock finds the binary on PATH, else where go install puts it.
func findStripeMock() string {
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
		p := filepath.Join(dir, "bin", "stripe-mock")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// recorder passes requests on to the network and keeps each exchange.
type recorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

type exchange struct {
	form   url.Values
	status int
	body   []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		var err error
		if sent, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	form, _ := url.ParseQuery(string(sent))
	r.mu.Lock()
	r.exchanges = append(r.exchanges, exchange{form: form, status: resp.StatusCode, body: body})
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) all() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.exchanges...)
}
