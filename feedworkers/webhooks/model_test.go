package webhooks_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store/repo"
)

// A model of delivery: random events of a few subjects (sequences with
// gaps), relayed in random batches (some replayed), and a receiver whose
// answers follow a random pattern, served by one or two dispatchers.
// After quiescence: every event is delivered or dead, the receiver
// acknowledged exactly the delivered ones, nothing was sent before its
// subject's earlier events were delivered or dead, and the dead-letter
// list is the events it never acknowledged.
func TestDeliveryModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var mu sync.Mutex
		answers := rapid.SliceOfN(rapid.SampledFrom([]int{200, 204, 500, 503, 404, 302}), 0, 60).Draw(rt, "answers")
		always := rapid.Bool().Draw(rt, "alwaysFailsOnce") // a subject whose first event fails every attempt
		rc := newReceiver(t, func(e client.WebhookEvent, attempt int) int {
			mu.Lock()
			defer mu.Unlock()
			if always && e.Subject == "s-0" && e.Sequence == 1 {
				return http.StatusInternalServerError
			}
			if len(answers) == 0 {
				return http.StatusOK
			}
			a := answers[0]
			answers = answers[1:]
			return a
		})
		r := repo.NewWebhooks(newStore(t))
		c := newClock()
		sub := subscribe(t, r, rc, c.Now())
		relay := webhooks.NewRelay(r, c.Now, 0)

		subjects := rapid.IntRange(1, 3).Draw(rt, "subjects")
		events := map[string][]int64{}
		var evs []domain.Event
		next := make([]int, subjects)
		for range rapid.IntRange(1, 12).Draw(rt, "events") {
			s := rapid.IntRange(0, subjects-1).Draw(rt, "subject")
			next[s] += rapid.IntRange(1, 3).Draw(rt, "gap")
			id := fmt.Sprintf("s-%d", s)
			if always && s == 0 && next[s] != 1 && len(events[id]) == 0 {
				next[s] = 1
			}
			evs = append(evs, orderEvent("u-"+id, id, next[s], c.Now()))
			events[id] = append(events[id], int64(next[s]))
		}
		dcount := rapid.IntRange(1, 2).Draw(rt, "dispatchers")
		var ds []*webhooks.Dispatcher
		for i := range dcount {
			ds = append(ds, webhooks.NewDispatcher(r, dispatcherConfig(c, fmt.Sprint("d", i))))
		}
		// Relay in batches, dispatching between them; a batch may be
		// replayed.
		for len(evs) > 0 {
			n := rapid.IntRange(1, len(evs)).Draw(rt, "batch")
			b := batch(t, evs[:n]...)
			if err := relay.Handle(t.Context(), b); err != nil {
				rt.Fatal(err)
			}
			if rapid.Bool().Draw(rt, "replay") {
				if err := relay.Handle(t.Context(), b); err != nil {
					rt.Fatal(err)
				}
			}
			evs = evs[n:]
			for _, d := range ds {
				if err := d.Poll(t.Context()); err != nil {
					rt.Fatal(err)
				}
				d.Wait()
			}
			c.Advance(time.Duration(rapid.IntRange(0, 5).Draw(rt, "advance")) * time.Second)
		}
		settle(t, r, c, 10*time.Second, 1000, []string{sub.ID}, ds...)

		total := 0
		for _, seqs := range events {
			total += len(seqs)
		}
		all := deliveries(t, r, sub.ID, "")
		if len(all) != total {
			rt.Fatalf("%d deliveries for %d events", len(all), total)
		}
		dead := map[string]bool{}
		for _, d := range all {
			switch d.Status {
			case domain.DeliveryDead:
				dead[d.EventID] = true
			case domain.DeliveryDelivered:
			default:
				rt.Fatalf("%s still %s", d.ID, d.Status)
			}
		}
		log := rc.received()
		acked := map[string]bool{}
		for _, rq := range log {
			if rq.Status < 300 {
				acked[rq.Event.ID] = true
			}
		}
		for _, d := range all {
			if acked[d.EventID] == dead[d.EventID] {
				var reqs []received
				for _, rq := range log {
					if rq.Event.ID == d.EventID {
						reqs = append(reqs, rq)
					}
				}
				rt.Errorf("%s: acknowledged %v, dead %v (attempts %d, last %d %q; requests %+v)", d.EventID, acked[d.EventID], dead[d.EventID], d.Attempts, d.LastStatus, d.LastError, reqs)
			}
		}
		if always && slices.Contains(events["s-0"], 1) && !dead[domain.EventID("s-0", 1)] {
			rt.Errorf("the event that always fails is not dead")
		}
		for _, v := range orderViolations(log, events, dead) {
			rt.Error(v)
		}
	})
}
