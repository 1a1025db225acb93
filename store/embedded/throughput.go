package embedded

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Provisioned throughput, as Cosmos enforces it: a container's Request
// Units per second (Options.Throughput, SetThroughput) are split evenly
// over its physical partitions, so a partition that splits halves its
// share and each half has its own; a partition's share is its budget of
// each clock second (Options.Now).
//
// A call is admitted while every partition it runs on has budget left in
// the current second, and once it has run it is charged what it cost, as
// its RequestCharge says: Cosmos too learns a request's charge only by
// running it. A charge past what was left is owed by the next seconds, so
// over any stretch of seconds a partition never spends more than it was
// given, and a call costing more than a whole second's budget still runs,
// at the start of a second, instead of never. A call refused is
// EUNAVAILABLE with a RetryAfter of the time until its partition has
// budget again (Cosmos's 429 with x-ms-retry-after-ms) and did nothing,
// so it costs nothing: Cosmos does not charge a throttled request. A
// query across partitions is refused when any of them is out of budget,
// and otherwise charges each an equal share of its charge (the fixed work
// per partition, 2.3 RU of charge.go, is most of it). Every caller shares
// the budgets: the API's requests, the feed workers' reads and writes.
// FeedFromNow sends nothing (feedNow), so it is neither refused nor
// charged; creating containers is the control plane, never throttled.

// meter is what one physical partition has spent: in the current second,
// against its budget, and since the store opened.
type meter struct {
	mu sync.Mutex
	// second is the Unix second that used and spent are of.
	second int64
	// used is the RU counted against this second's budget: its charges and
	// what earlier seconds overspent.
	used float64
	// spent is the RU charged in this second, last in the second before.
	spent, last float64
	total       float64
	throttled   int64
}

// advance moves the meter to second sec, each second that passed paying
// off one budget of what was used. A clock that went back leaves it.
func (m *meter) advance(sec int64, budget float64) {
	if sec <= m.second {
		return
	}
	k := sec - m.second
	m.used = max(0, m.used-float64(k)*budget)
	m.last = 0
	if k == 1 {
		m.last = m.spent
	}
	m.spent, m.second = 0, sec
}

// admit reports whether a call may run at now on a budget of budget RU
// per second (0: unlimited) and, if not, how long until it may, counting
// the refusal.
func (m *meter) admit(now time.Time, budget float64) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(now.Unix(), budget)
	if m.used < budget {
		return 0, true
	}
	m.throttled++
	// The first second whose share of the debt leaves some budget: after
	// k more seconds used is used − k·budget, which is below budget from
	// k = floor(used/budget) on.
	k := int64(math.Floor(m.used / budget))
	return time.Unix(m.second+k, 0).Sub(now), false
}

// charge books ru spent at now.
func (m *meter) charge(now time.Time, budget, ru float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(now.Unix(), budget)
	m.spent += ru
	m.total += ru
	if budget > 0 {
		m.used += ru
	}
}

func newMeters(n int) []*meter {
	ms := make([]*meter, n)
	for i := range ms {
		ms[i] = new(meter)
	}
	return ms
}

// SetThroughput provisions ru Request Units per second for every
// container, split evenly over each one's physical partitions (0:
// unlimited), from the next call on; what the partitions have spent so
// far stays counted.
func (s *Store) SetThroughput(ru float64) {
	s.throughput.Store(math.Float64bits(max(ru, 0)))
}

// SetContainerThroughput provisions ru Request Units per second for the
// named container alone, as Cosmos provisions each container apart (0:
// unlimited); SetThroughput no longer applies to it.
func (s *Store) SetContainerThroughput(name string, ru float64) {
	s.ownThroughput.Store(name, max(ru, 0))
}

// budget is each physical partition's share of st's throughput, in RU per
// second; 0 is unlimited.
func (s *Store) budget(st *containerState) float64 {
	if ru, ok := s.ownThroughput.Load(st.name); ok {
		return ru.(float64) / float64(len(st.parts))
	}
	return math.Float64frombits(s.throughput.Load()) / float64(len(st.parts))
}

// admit refuses the call when a physical partition it runs on (indexes
// parts of st) has no budget left this second.
func (s *Store) admit(st *containerState, parts ...int) error {
	budget := s.budget(st)
	if budget == 0 {
		return nil
	}
	now := s.opts.Now()
	var wait time.Duration
	refused := -1
	for _, p := range parts {
		if d, ok := st.meters[p].admit(now, budget); !ok && d >= wait {
			wait, refused = d, p
		}
	}
	if refused < 0 {
		return nil
	}
	return &domain.Error{Code: domain.EUNAVAILABLE, RetryAfter: wait, Message: fmt.Sprintf(
		"the store is throttling requests (429): partition %s of %s has spent its %g RU/s; retry after %s",
		st.ranges[refused], st.name, budget, wait.Round(time.Millisecond))}
}

// charge books a call's charge ru on the physical partitions it ran on,
// an equal share on each.
func (s *Store) charge(st *containerState, ru float64, parts ...int) {
	if ru <= 0 || len(parts) == 0 {
		return
	}
	budget, now, share := s.budget(st), s.opts.Now(), ru/float64(len(parts))
	for _, p := range parts {
		st.meters[p].charge(now, budget, share)
	}
}

// Throughput reports every physical partition of every container: its
// share of the provisioned throughput, what it spent in the last whole
// second and since the store opened, and how many calls it refused.
func (s *Store) Throughput() []store.PartitionThroughput {
	s.mu.RLock()
	states := make([]*containerState, 0, len(s.containers))
	for _, st := range s.containers {
		states = append(states, st)
	}
	s.mu.RUnlock()
	slices.SortFunc(states, func(a, b *containerState) int { return cmp.Compare(a.name, b.name) })
	now := s.opts.Now()
	var out []store.PartitionThroughput
	for _, st := range states {
		budget := s.budget(st)
		for i, m := range st.meters {
			m.mu.Lock()
			m.advance(now.Unix(), budget)
			out = append(out, store.PartitionThroughput{Container: st.name, Partition: st.ranges[i], Provisioned: budget,
				LastSecond: round2(m.last), RequestCharge: round2(m.total), Throttled: m.throttled})
			m.mu.Unlock()
		}
	}
	return out
}
