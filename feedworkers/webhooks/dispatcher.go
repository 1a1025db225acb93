package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reference-shop/shop/api/webhooksig"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// RetryHorizon is how long a delivery is tried: once its next attempt
// would fall more than RetryHorizon after it was created (or
// redelivered), it is dead instead. Well inside domain.EventRetention.
const RetryHorizon = 24 * time.Hour

// Defaults of DispatcherConfig.
const (
	DefaultPollEvery   = time.Second
	DefaultIdlePoll    = 10 * time.Second
	DefaultConcurrency = 4
	DefaultTimeout     = 10 * time.Second
	DefaultBackoffBase = time.Second
	DefaultBackoffCap  = time.Hour
)

// DispatcherConfig configures a Dispatcher; the zero value is the
// default.
type DispatcherConfig struct {
	// Instance names this dispatcher in its claims (default a random
	// name).
	Instance string
	// PollEvery is the time between two looks for due deliveries while
	// there are some (DefaultPollEvery). A look that finds none doubles
	// the wait, up to IdlePoll (DefaultIdlePoll): every look is a query
	// of the subscriptions and one of each one's due deliveries, Request
	// Units an idle shop would otherwise spend every second. A delivery
	// the relay of this instance writes wakes the dispatcher at once
	// (Notify); a retry is sent up to IdlePoll after it falls due.
	PollEvery, IdlePoll time.Duration
	// Concurrency bounds the requests in flight to one subscription
	// (DefaultConcurrency).
	Concurrency int
	// Timeout bounds one request, connection to last byte read
	// (DefaultTimeout).
	Timeout time.Duration
	// BackoffBase and BackoffCap shape the wait before a retry: after the
	// n-th failed attempt a random time in [0, min(BackoffCap,
	// BackoffBase·2^(n-1))) (exponential backoff with full jitter).
	BackoffBase, BackoffCap time.Duration
	// RetryHorizon replaces the package's RetryHorizon (for tests).
	RetryHorizon time.Duration
	// Policy says which receivers may be called (see Policy).
	Policy Policy
	// Now is the dispatcher's clock (default time.Now).
	Now func() time.Time
	// Logger logs each failed attempt (default: discard). It never sees a
	// secret, nor a URL (which may carry a receiver's token).
	Logger *slog.Logger
	// Client replaces Policy.Client (tests of the dispatcher alone).
	Client *http.Client
}

func (c *DispatcherConfig) defaults() {
	if c.Instance == "" {
		c.Instance = "dispatcher-" + domain.RandomSuffix()
	}
	if c.PollEvery <= 0 {
		c.PollEvery = DefaultPollEvery
	}
	if c.IdlePoll < c.PollEvery {
		c.IdlePoll = max(c.PollEvery, DefaultIdlePoll)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffCap <= 0 {
		c.BackoffCap = DefaultBackoffCap
	}
	if c.RetryHorizon <= 0 {
		c.RetryHorizon = RetryHorizon
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Client == nil {
		c.Client = c.Policy.Client(c.Timeout)
	}
}

// Dispatcher sends the due deliveries to their receivers. Every shop
// instance runs one: they share the work through the claims (a delivery
// is claimed with If-Match before it is sent, so two never send it at
// once). Delivery is at least once: a dispatcher that stops between the
// request and the write of its outcome leaves the delivery to be sent
// again when its claim runs out.
type Dispatcher struct {
	repo *repo.Webhooks
	cfg  DispatcherConfig

	mu       sync.Mutex
	inflight map[string]int // per subscription
	sending  sync.WaitGroup
	stop     context.CancelFunc
	quit     chan struct{}
	done     chan struct{}
	wake     chan struct{} // Notify's, one pending at most
}

// NewDispatcher returns a dispatcher over r; Start runs it.
func NewDispatcher(r *repo.Webhooks, cfg DispatcherConfig) *Dispatcher {
	cfg.defaults()
	return &Dispatcher{repo: r, cfg: cfg, inflight: map[string]int{}, wake: make(chan struct{}, 1)}
}

// Notify tells the dispatcher a delivery was written: it looks at once
// rather than at the end of an idle wait. It never blocks.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Start polls every PollEvery until Stop (or ctx ends).
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done != nil {
		return domain.Errorf(domain.ECONFLICT, "the webhook dispatcher is already started")
	}
	ctx, d.stop = context.WithCancel(context.WithoutCancel(ctx))
	d.done, d.quit = make(chan struct{}), make(chan struct{})
	quit := d.quit
	go func() {
		defer close(d.done)
		wait := d.cfg.PollEvery
		t := time.NewTimer(wait)
		defer t.Stop()
		for {
			started, err := d.poll(ctx)
			if err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("webhook dispatcher poll failed", "err", err)
			}
			if started > 0 || err != nil {
				wait = d.cfg.PollEvery
			} else {
				wait = min(2*wait, d.cfg.IdlePoll)
			}
			t.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-quit:
				return
			case <-d.wake:
				wait = d.cfg.PollEvery
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop stops polling and waits, until ctx ends, for the requests in
// flight; those still running then are cancelled (their deliveries are
// sent again once their claims run out).
func (d *Dispatcher) Stop(ctx context.Context) error {
	d.mu.Lock()
	stop, done, quit := d.stop, d.done, d.quit
	d.quit = nil
	d.mu.Unlock()
	if done == nil {
		return nil
	}
	if quit != nil {
		close(quit)
	}
	idle := make(chan struct{})
	go func() {
		<-done
		d.sending.Wait()
		close(idle)
	}()
	// Polling stops now; the sends in flight get until ctx ends.
	select {
	case <-idle:
		stop()
		return nil
	case <-ctx.Done():
		stop()
		<-idle
		return ctx.Err()
	}
}

// Poll looks once for due deliveries of every subscription that is not
// paused and starts sending them, at most Concurrency at a time per
// subscription (counting those still in flight from earlier polls). It
// returns once they are started; Wait waits for them.
func (d *Dispatcher) Poll(ctx context.Context) error {
	_, err := d.poll(ctx)
	return err
}

// poll is Poll, saying how many sends it started.
func (d *Dispatcher) poll(ctx context.Context) (int, error) {
	subs, err := d.repo.List(ctx, repo.MaxSubscriptions)
	if err != nil {
		return 0, err
	}
	started := 0
	var errs []error
	for _, s := range subs {
		if s.Paused {
			continue
		}
		free := d.cfg.Concurrency - d.inFlight(s.ID)
		if free <= 0 {
			continue
		}
		due, err := d.repo.Due(ctx, s.ID, d.cfg.Now(), free)
		if err != nil {
			errs = append(errs, fmt.Errorf("subscription %s: %w", s.ID, err))
			continue
		}
		started += len(due)
		for _, dl := range due {
			d.mu.Lock()
			d.inflight[s.ID]++
			d.mu.Unlock()
			d.sending.Add(1)
			go func() {
				defer d.sending.Done()
				defer func() {
					d.mu.Lock()
					d.inflight[s.ID]--
					d.mu.Unlock()
				}()
				if err := d.send(ctx, s, dl); err != nil && ctx.Err() == nil {
					d.cfg.Logger.Warn("webhook delivery not recorded", "subscription", s.ID, "delivery", dl.ID, "err", err)
				}
			}()
		}
	}
	return started, errors.Join(errs...)
}

// Wait waits for the sends Poll started.
func (d *Dispatcher) Wait() { d.sending.Wait() }

func (d *Dispatcher) inFlight(sub string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inflight[sub]
}

// claimMargin is how much longer than a request a claim holds: the
// outcome's write comes after the request.
const claimMargin = 30 * time.Second

// send claims dl, sends it and records the outcome. A claim lost to
// another dispatcher is no error: it sends it.
func (d *Dispatcher) send(ctx context.Context, s domain.Subscription, dl domain.Delivery) error {
	now := d.cfg.Now()
	dl, err := d.repo.Claim(ctx, dl, d.cfg.Instance, now, now.Add(d.cfg.Timeout+claimMargin))
	if domain.IsCode(err, domain.EPRECONDITION) {
		return nil
	}
	if err != nil {
		return err
	}
	status, failure := d.post(ctx, s, dl)
	now = d.cfg.Now()
	switch {
	case failure == "":
		_, err = d.repo.Complete(ctx, dl, status, now)
	default:
		d.cfg.Logger.Info("webhook attempt failed", "subscription", s.ID, "delivery", dl.ID, "attempt", dl.Attempts+1, "status", status, "err", failure)
		next := now.Add(d.backoff(dl.Attempts + 1))
		start := dl.CreatedAt
		if dl.RedeliveredAt != nil && dl.RedeliveredAt.After(start) {
			start = *dl.RedeliveredAt
		}
		if next.After(start.Add(d.cfg.RetryHorizon)) {
			_, err = d.repo.MarkDead(ctx, dl, status, failure, now)
		} else {
			_, err = d.repo.Fail(ctx, dl, status, failure, next)
		}
	}
	if domain.IsCode(err, domain.EPRECONDITION) {
		return nil // our claim ran out and another dispatcher took it
	}
	return err
}

// backoff is the wait after the n-th failed attempt: full jitter over
// min(cap, base·2^(n-1)).
func (d *Dispatcher) backoff(n int) time.Duration {
	ceil := d.cfg.BackoffCap
	if n-1 < 40 {
		ceil = min(ceil, d.cfg.BackoffBase<<(n-1))
	}
	if ceil <= 0 {
		return 0
	}
	return rand.N(ceil)
}

// post makes one attempt: it returns the receiver's status (0 if none
// came) and, unless it was a 2xx, why the attempt failed.
func (d *Dispatcher) post(ctx context.Context, s domain.Subscription, dl domain.Delivery) (int, string) {
	if err := d.cfg.Policy.Check(s.URL); err != nil {
		return 0, domain.ErrorMessage(err)
	}
	now := d.cfg.Now()
	secrets := s.ValidSecrets(now)
	if len(secrets) == 0 {
		return 0, "the subscription has no valid signing secret: rotate it"
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(dl.Body))
	if err != nil {
		return 0, "bad request: " + stripURL(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Shop-Webhooks/1")
	req.Header.Set(webhooksig.SignatureHeader, webhooksig.Sign(secrets, now, dl.Body))
	req.Header.Set(webhooksig.EventIDHeader, dl.EventID)
	req.Header.Set(webhooksig.EventTypeHeader, dl.EventType)
	req.Header.Set(webhooksig.AttemptHeader, strconv.Itoa(dl.Attempts+1))
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		return 0, stripURL(err)
	}
	defer resp.Body.Close()
	head, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	why := resp.Status
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		why += " (redirects are not followed: change the subscription's URL)"
	}
	if t := strings.TrimSpace(strings.ToValidUTF8(string(head[:min(len(head), 200)]), "")); t != "" {
		why += ": " + t
	} else if err != nil {
		why += ": " + stripURL(err)
	}
	return resp.StatusCode, why
}

// stripURL is err's message without the URL a *url.Error names: a
// receiver's URL may carry its own token, and LastError is shown to the
// admin and logged.
func stripURL(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		if errors.Is(ue.Err, ErrBlockedAddress) {
			return ErrBlockedAddress.Error()
		}
		if ue.Timeout() {
			return ue.Op + ": timeout"
		}
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}
