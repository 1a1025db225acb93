package loadbench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// breakdown is where a shop's CPU went while wrk loaded its product page:
// a CPU profile taken through its SHOP_PPROF_ADDR listener, each sample
// given to one part of the program.
type breakdown struct {
	// Seconds is the CPU time the profile sampled.
	Seconds float64 `json:"seconds"`
	Parts   []share `json:"parts"`
}

// share is one part's share of the samples, and of one request's CPU
// time (the share times the CPU time per request measured apart, without
// the profiler running).
type share struct {
	Part             string  `json:"part"`
	Percent          float64 `json:"percent"`
	MicrosPerRequest float64 `json:"microsPerRequest,omitempty"`
}

// profileParts name the parts of the program, each by the prefixes of
// its functions. A sample belongs to the first part that one of its
// frames matches, from the innermost frame out: an allocation made by the
// telemetry is the allocator's, a write made by the handler is net/http's.
var profileParts = []struct {
	name     string
	prefixes []string
}{
	{"allocation and garbage collection", []string{
		"runtime.mallocgc", "runtime.newobject", "runtime.makeslice", "runtime.growslice", "runtime.makemap",
		"runtime.gc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.sweepone", "runtime.scanobject", "runtime.markroot",
		"runtime.wbBuf", "gcWriteBarrier", "runtime.(*mheap)", "runtime.(*mcache)", "runtime.(*mcentral)", "runtime.(*gcWork)",
		"runtime.greyobject", "runtime.memclrNoHeapPointers", "runtime.concatstring", "runtime.rawstring", "runtime.slicebytetostring",
	}},
	{"store read (embedded store, bbolt)", []string{"github.com/reference-shop/shop/store/embedded.", "go.etcd.io/bbolt."}},
	{"store tracing and metrics", []string{"github.com/reference-shop/shop/store.tracedContainer", "github.com/reference-shop/shop/store.operation", "github.com/reference-shop/shop/store.meteredContainer", "github.com/reference-shop/shop/store.(*instruments)"}},
	{"encoding the response", []string{"encoding/json.", "github.com/reference-shop/shop/api.writeBody", "github.com/reference-shop/shop/api.encode"}},
	{"telemetry: server span and request metrics", []string{"github.com/reference-shop/shop/api/telemetry.", "go.opentelemetry.io/"}},
	{"router (chi)", []string{"github.com/go-chi/"}},
	{"API middleware and handlers", []string{"github.com/reference-shop/shop/api.", "github.com/reference-shop/shop/domain.", "github.com/reference-shop/shop/store.", "github.com/golang-jwt/"}},
	{"net/http: reading requests, writing responses (system calls included)", []string{
		"net/http.", "net.", "net/textproto.", "net/url.", "internal/poll.", "syscall.", "internal/runtime/syscall.", "bufio.",
	}},
	{"feed workers", []string{"github.com/reference-shop/shop/feedworkers"}},
}

const otherPart = "scheduler and the rest of the runtime"

// takeProfile profiles the shop at pprofURL for d while load runs.
func takeProfile(ctx context.Context, pprofURL string, d time.Duration) (*profile.Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", pprofURL, int(d.Seconds())), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("profile: %s", resp.Status)
	}
	return profile.Parse(resp.Body)
}

// breakDown gives each sample of p to its part.
func breakDown(p *profile.Profile, microsPerRequest float64) breakdown {
	cpu := len(p.SampleType) - 1 // the last value is the CPU time
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			cpu = i
		}
	}
	byPart := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[cpu]
		total += v
		byPart[partOf(s)] += v
	}
	b := breakdown{Seconds: report.Round2(float64(total) / 1e9)}
	if total == 0 {
		return b
	}
	names := make([]string, 0, len(profileParts)+1)
	for _, part := range profileParts {
		names = append(names, part.name)
	}
	for _, name := range append(names, otherPart) {
		pct := float64(byPart[name]) / float64(total) * 100
		b.Parts = append(b.Parts, share{Part: name, Percent: report.Round2(pct), MicrosPerRequest: report.Round2(pct / 100 * microsPerRequest)})
	}
	return b
}

// partOf is the part a sample belongs to.
func partOf(s *profile.Sample) string {
	for _, loc := range s.Location {
		// Inlined functions come first in a location's lines.
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			name := line.Function.Name
			for _, part := range profileParts {
				for _, prefix := range part.prefixes {
					if strings.HasPrefix(name, prefix) {
						return part.name
					}
				}
			}
		}
	}
	return otherPart
}
