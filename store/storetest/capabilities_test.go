package storetest

import (
	"testing"
)

// TestZeroOptionsHoldToEverything: a target that declares nothing lacks
// nothing, whichever test asks.
func TestZeroOptionsHoldToEverything(t *testing.T) {
	if err := (Options{}).check(); err != nil {
		t.Fatalf("the zero Options: %v", err)
	}
	targets.Store(t.Name(), Options{})
	defer targets.Delete(t.Name())
	t.Run("Nested", func(t *testing.T) {
		for _, c := range Capabilities {
			if lacks(t, c) {
				t.Errorf("the zero Options lack %s", c)
			}
		}
	})
}

// TestDeclaredGapsAreFound: a gap applies to every test of its Run, and
// to no other test.
func TestDeclaredGapsAreFound(t *testing.T) {
	targets.Store(t.Name(), Options{Lacks: map[Capability]string{Charges: "computes none"}})
	defer targets.Delete(t.Name())
	t.Run("Nested/Deeper", func(t *testing.T) {
		if !lacks(t, Charges) {
			t.Error("a nested test of the Run does not see its Charges gap")
		}
		if lacks(t, TTL) {
			t.Error("a gap not declared is seen")
		}
	})
}

func TestOptionsCheck(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"documented gap", Options{Lacks: map[Capability]string{TTL: "not implemented, per its feature table"}}, true},
		{"unknown capability", Options{Lacks: map[Capability]string{"ttl-ish": "typo"}}, false},
		{"gap without a reason", Options{Lacks: map[Capability]string{ChangeFeed: " "}}, false},
		{"covered elsewhere", Options{Elsewhere: map[string]string{ThrottledOverBudget: "TestMapErrorStatusTable"}}, true},
		{"elsewhere for another test", Options{Elsewhere: map[string]string{"Query": "TestWire"}}, false},
		{"elsewhere naming nothing", Options{Elsewhere: map[string]string{ChangeFeedAcrossSplit: ""}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.opts.check(); (err == nil) != tt.ok {
				t.Errorf("check() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
