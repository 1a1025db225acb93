package changefeed

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/reference-shop/shop/domain"
)

// Config configures one processor: a name that scopes its leases, and
// how it paces its reads, renewals and retries.
type Config struct {
	// Name scopes the leases ("products" → "products.<range>"); two
	// processors of the same name share the work, two names each see
	// every change.
	Name string
	// Watched names the watched container, in each lease and in errors.
	Watched string
	// Instance identifies this process among those sharing the leases
	// (default hostname-pid).
	Instance string
	// MaxItems is the page size of a feed read (default 100).
	MaxItems int
	// LeaseExpiry: a lease whose heartbeat is older is free (default 10 s).
	LeaseExpiry time.Duration
	// RenewEvery is the heartbeat and balancing period (default
	// LeaseExpiry / 3, so two renewals may fail before the lease expires).
	RenewEvery time.Duration
	// PollEvery is the wait after an empty page (default 200 ms).
	PollEvery time.Duration
	// MaxAttempts a batch (then a document) is tried before the document
	// is dead-lettered (default 5).
	MaxAttempts int
	// Backoff is the first retry delay, doubled on each attempt up to
	// 100 × Backoff (default 100 ms).
	Backoff time.Duration
	// OnBatch, when set, sees every attempt at a batch.
	OnBatch BatchHook
	// TraceBatch, when set, wraps every attempt at a batch: it gets the
	// context the handler will run in and returns the one to use (with a
	// span, so the batch's store calls are its children) and a function
	// called with the outcome.
	TraceBatch func(ctx context.Context, lease string) (context.Context, func(items int, ru float64, err error))
	// StartFromNow: a lease created for the first time starts at the
	// present end of its feed range instead of the beginning (Cosmos's
	// ChangeFeedStartFromNow), for a tool that writes consistent data
	// itself. It reads no history (feedNow). A lease that exists keeps
	// its checkpoint, and a lease split from it its parent's.
	StartFromNow bool
}

func (c *Config) defaults() error {
	if c.Name == "" || c.Watched == "" {
		return domain.Errorf(domain.EINVALID, "a processor needs a name and the watched container's name")
	}
	if c.Instance == "" {
		c.Instance = DefaultInstance()
	}
	if c.MaxItems <= 0 {
		c.MaxItems = 100
	}
	if c.LeaseExpiry <= 0 {
		c.LeaseExpiry = 10 * time.Second
	}
	if c.RenewEvery <= 0 {
		c.RenewEvery = c.LeaseExpiry / 3
	}
	if c.PollEvery <= 0 {
		c.PollEvery = 200 * time.Millisecond
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.Backoff <= 0 {
		c.Backoff = 100 * time.Millisecond
	}
	return nil
}

// DefaultInstance names this process: hostname-pid.
func DefaultInstance() string {
	host, err := os.Hostname()
	if err != nil {
		host = "shop"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
