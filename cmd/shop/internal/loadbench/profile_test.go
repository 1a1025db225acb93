package loadbench

import (
	"archive/tar"
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// stack is a sample whose frames are names, innermost first.
func stack(v int64, names ...string) *profile.Sample {
	s := &profile.Sample{Value: []int64{1, v}}
	for _, n := range names {
		s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
	}
	return s
}

func TestBreakDown(t *testing.T) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			// An allocation inside the telemetry is the allocator's.
			stack(30, "runtime.mallocgc", "github.com/reference-shop/shop/api/telemetry.Middleware.func1", "net/http.(*conn).serve"),
			// A write the handler makes is net/http's.
			stack(20, "internal/runtime/syscall.Syscall6", "net.(*conn).Write", "github.com/reference-shop/shop/api.writeBody", "net/http.(*conn).serve"),
			stack(10, "go.etcd.io/bbolt.(*Cursor).search", "github.com/reference-shop/shop/store/embedded.(*Container).Read", "github.com/reference-shop/shop/api.handleProduct"),
			stack(15, "github.com/reference-shop/shop/api/telemetry.(*httpInstruments).recordDuration", "net/http.(*conn).serve"),
			stack(25, "runtime.futex", "runtime.schedule"),
		},
	}
	b := breakDown(p, 40)
	want := map[string]float64{
		"allocation and garbage collection":                                     30,
		"net/http: reading requests, writing responses (system calls included)": 20,
		"store read (embedded store, bbolt)":                                    10,
		"telemetry: server span and request metrics":                            15,
		otherPart: 25,
	}
	var sum float64
	for _, s := range b.Parts {
		if got := s.Percent; got != want[s.Part] {
			t.Errorf("%s = %v%%, want %v%%", s.Part, got, want[s.Part])
		}
		if got, want := s.MicrosPerRequest, want[s.Part]/100*40; got != want {
			t.Errorf("%s = %v µs, want %v µs", s.Part, got, want)
		}
		sum += s.Percent
	}
	if sum != 100 || len(b.Parts) != len(profileParts)+1 {
		t.Errorf("%d parts summing to %v%%, want %d summing to 100%%", len(b.Parts), sum, len(profileParts)+1)
	}
}

func TestUntarRefusesPathsOut(t *testing.T) {
	for _, name := range []string{"../escape", "a/../../escape"} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte("x"))
		tw.Close()
		if err := untar(&buf, filepath.Join(t.TempDir(), "src")); err == nil {
			t.Errorf("untar of %q: no error, want a refusal", name)
		}
	}
}
