package scale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reference-shop/shop/api"
)

// flashShop is `shop serve` running as a process of its own, as people
// run it: the load of --flash-shards comes from this process, so the
// shop's runtime serves requests and nothing else, and what the load
// generator spends is not the shop's.
type flashShop struct {
	cmd    *exec.Cmd
	url    string
	secret []byte
	client *http.Client
	// tail keeps its last lines, for the error when it dies.
	mu     sync.Mutex
	tail   []string
	exited chan struct{}
}

// flashShopEnv is the environment of the child: this process's without
// any SHOP_ setting (the shop runs with its defaults), plus settings.
func flashShopEnv(environ []string, settings map[string]string) []string {
	var env []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "SHOP_") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		env = append(env, k+"="+settings[k])
	}
	return env
}

// startFlashShop runs `bin serve` over dataDir on a free loopback port
// with settings, and waits until it listens.
func startFlashShop(ctx context.Context, bin, dataDir string, secret []byte, settings map[string]string) (*flashShop, error) {
	env := map[string]string{
		"SHOP_ADDR":       "127.0.0.1:0",
		"SHOP_DATA_DIR":   dataDir,
		"SHOP_SEED":       "false",
		"SHOP_JWT_SECRET": string(secret),
		"SHOP_LOG_LEVEL":  "error",
	}
	maps.Copy(env, settings)
	cmd := exec.Command(bin, "serve")
	cmd.Env = flashShopEnv(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &flashShop{cmd: cmd, secret: secret, exited: make(chan struct{}), client: &http.Client{
		Timeout: 30 * time.Second,
		// One connection per checkout in flight: the load is open, so
		// as many may be in flight as the shop is slow.
		Transport: &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, IdleConnTimeout: 30 * time.Second},
	}}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			if s.tail = append(s.tail, line); len(s.tail) > 20 {
				s.tail = s.tail[1:]
			}
			s.mu.Unlock()
			if u, ok := strings.CutPrefix(line, "shop: listening on "); ok && !sent {
				ready <- u
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case s.url = <-ready:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("%s exited before listening: %s", bin, s.lastLines())
	case <-time.After(time.Minute):
		s.stop()
		return nil, fmt.Errorf("%s did not listen within a minute: %s", bin, s.lastLines())
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
}

func (s *flashShop) lastLines() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// stop asks the shop to shut down as SIGTERM does, and kills it if it
// has not within 20 seconds.
func (s *flashShop) stop() {
	s.client.CloseIdleConnections()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// alive reports an error if the shop has exited.
func (s *flashShop) alive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("the shop exited: %s", s.lastLines())
	default:
		return nil
	}
}

// token is a bearer token signed with the child's secret.
func (s *flashShop) token(userID string, admin bool) string {
	tok, err := api.IssueToken(s.secret, userID, userID, userID+"@example.com", admin, 2*time.Hour)
	if err != nil {
		panic(err) // HS256 over a fixed key does not fail
	}
	return tok
}

// shopAnswer is one answer of the shop as the harness reads it.
type shopAnswer struct {
	code       int
	retryAfter bool
	charge     float64 // X-Request-Charge
	body       []byte
	latency    time.Duration
	err        error
}

// send sends one request and reads its whole answer.
func (s *flashShop) send(ctx context.Context, method, path, token string, body []byte, headers map[string]string) shopAnswer {
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return shopAnswer{err: err}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return shopAnswer{err: err, latency: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := shopAnswer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After") != "", body: b, err: err, latency: time.Since(start)}
	a.charge, _ = strconv.ParseFloat(resp.Header.Get("X-Request-Charge"), 64)
	return a
}

// maxSetupTries bounds the tries of one call of the harness's own (the
// preparation, never a measured checkout): a 503 with Retry-After (the
// throttled inventory) is sent again after a short wait.
const maxSetupTries = 50

// must sends a call of the harness's own until it answers one of want,
// and decodes the body into into (when not nil).
func (s *flashShop) must(ctx context.Context, method, path, token string, body any, into any, want ...int) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for try := 1; ; try++ {
		a := s.send(ctx, method, path, token, raw, nil)
		switch {
		case a.err == nil && slices.Contains(want, a.code):
			if into != nil {
				return json.Unmarshal(a.body, into)
			}
			return nil
		case a.err == nil && a.code == http.StatusServiceUnavailable && try < maxSetupTries:
		case a.err != nil:
			return fmt.Errorf("%s %s: %w", method, path, a.err)
		default:
			return fmt.Errorf("%s %s: %d %s", method, path, a.code, bytes.TrimSpace(a.body))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50*try) * time.Millisecond):
		}
	}
}
