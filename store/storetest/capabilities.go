package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Capability is one behaviour of Cosmos DB the suite holds a target to
// beyond what every target must do (point operations, ETags, If-Match,
// the limits, queries and their pages). A real account and the embedded
// store have them all; an emulator may document that it lacks some.
type Capability string

// The capabilities, each with what the suite requires of a target that
// has it.
const (
	// Charges: every successful call reports a positive RequestCharge
	// (x-ms-request-charge on Cosmos, the estimate on the embedded store).
	// A target lacking it still runs every test, without the charge checks.
	Charges Capability = "charges"
	// Batch: transactional batches commit all or nothing in one logical
	// partition, with a result per operation (424 for the rolled back).
	Batch Capability = "batch"
	// Patch: partial document update (set, replace, add, remove, incr),
	// atomic, with If-Match.
	Patch Capability = "patch"
	// ConditionalPatch: a patch's filter predicate, alone and in a batch,
	// is evaluated in the write's atomic step: 412 when it does not hold.
	ConditionalPatch Capability = "conditional-patch"
	// UniqueKeys: a container's unique key policy is enforced per logical
	// partition.
	UniqueKeys Capability = "unique-keys"
	// CompositeIndexes: an ORDER BY is served by the composite index the
	// container declares, so an item without the property is left out.
	CompositeIndexes Capability = "composite-indexes"
	// ChangeFeed: latest-version change feed per feed range, with
	// continuations.
	ChangeFeed Capability = "change-feed"
	// TTL: a container's default time to live and an item's own ttl
	// expire items.
	TTL Capability = "ttl"
)

// Capabilities lists every capability, in the order above.
var Capabilities = []Capability{Charges, Batch, Patch, ConditionalPatch, UniqueKeys, CompositeIndexes, ChangeFeed, TTL}

// Options says what Run holds a target to. The zero value holds it to
// everything: the embedded store and a real account run with it.
type Options struct {
	// Lacks names the capabilities the target is documented to lack, each
	// with the reason (where it is documented). A test that needs one is
	// skipped, saying so; for Charges only the charge checks are lifted.
	// Nothing else is loosened.
	Lacks map[Capability]string
	// Elsewhere names, for a target that cannot throttle or split on
	// demand (no Throttler, no Splitter), what shows that behaviour
	// instead: how to run it for real, and the tests that cover it on
	// every run, by subtest (ThrottledOverBudget, ChangeFeedAcrossSplit).
	// The subtest is then skipped with that text. A target without the
	// hook that names nothing here fails the subtest: no skip is silent.
	Elsewhere map[string]string
	// Provisioned says the target can neither create nor change a
	// container (Cosmos with Entra ID, whose data-plane roles do
	// neither): the suite's containers exist already, deployed from
	// suite.Containers (`shop containers -contract`), and may hold what
	// an earlier run left. Each test checks that its containers are as
	// listed (EnsureContainer reports no change) and empties them before
	// it starts. The one test of creating a container runs what it can
	// and logs which runs cover the create; nothing else is loosened.
	Provisioned bool
}

// The subtests that need a hook a real account does not have.
const (
	ThrottledOverBudget   = "ThrottledOverBudget"
	ChangeFeedAcrossSplit = "ChangeFeedAcrossSplit"
)

// check refuses a gap that names no capability or gives no reason: a gap
// is a documented fact about the target, not a way to quiet a failure.
func (o Options) check() error {
	for c, why := range o.Lacks {
		if !slices.Contains(Capabilities, c) {
			return fmt.Errorf("storetest.Options.Lacks: %q is not a capability (%v)", c, Capabilities)
		}
		if strings.TrimSpace(why) == "" {
			return fmt.Errorf("storetest.Options.Lacks: %s has no reason", c)
		}
	}
	for name, what := range o.Elsewhere {
		if name != ThrottledOverBudget && name != ChangeFeedAcrossSplit {
			return fmt.Errorf("storetest.Options.Elsewhere: %q is not %s or %s", name, ThrottledOverBudget, ChangeFeedAcrossSplit)
		}
		if strings.TrimSpace(what) == "" {
			return fmt.Errorf("storetest.Options.Elsewhere: %s names nothing", name)
		}
	}
	return nil
}

// withoutHook ends test name, whose target lacks the hook it needs:
// skipped with what covers it instead, or failed when the target's
// Options name nothing.
func withoutHook(t *testing.T, name, hook string) {
	t.Helper()
	what := optionsOf(t).Elsewhere[name]
	if what == "" {
		t.Fatalf("the store implements no %s and its Options.Elsewhere names nothing for %s: say what covers it", hook, name)
	}
	t.Skipf("the store implements no %s; %s", hook, what)
}

// targets holds the Options of each Run in progress by the name of its
// test, so that a helper checking a capability every test touches
// (charged) finds the target's from the test it is given.
var targets sync.Map

// provisioned reports whether the target of the Run that t belongs to
// is Provisioned.
func provisioned(t *testing.T) bool {
	return optionsOf(t).Provisioned
}

// optionsOf returns the Options of the Run that t belongs to (the zero
// Options outside a Run).
func optionsOf(t *testing.T) Options {
	name, opts := t.Name(), Options{}
	targets.Range(func(k, v any) bool {
		if p := k.(string); name == p || strings.HasPrefix(name, p+"/") {
			opts = v.(Options)
			return false
		}
		return true
	})
	return opts
}

// lacks reports whether the target of the Run that t belongs to lacks c.
func lacks(t *testing.T, c Capability) bool {
	_, gap := optionsOf(t).Lacks[c]
	return gap
}
