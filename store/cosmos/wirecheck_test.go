package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
)

// How TestWire judges a run of the contract against the declared gaps:
// the run comes from `go tool test2json` (cmd/test2json's events), one
// result per test, and every way it disagrees with wireGaps is a problem.

// testEvent is the part of one test2json event the check reads.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// testResult is how one test of a run ended and what it printed itself.
type testResult struct {
	action string   // pass, fail or skip; "" if it never ended
	lines  []string // its own output, without the framing lines (=== RUN, --- FAIL, ...)
}

// readRun reads a test2json stream into each test's result, by full name.
// Output of no test (a panic's trace, "FAIL") is kept under "".
func readRun(r io.Reader) (map[string]*testResult, error) {
	run := map[string]*testResult{}
	dec := json.NewDecoder(r)
	for {
		var e testEvent
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			return run, nil
		} else if err != nil {
			return run, fmt.Errorf("test2json stream: %w", err)
		}
		res := run[e.Test]
		if res == nil {
			res = &testResult{}
			run[e.Test] = res
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if e.Test != "" {
				res.action = e.Action
			}
		case "output":
			if line := strings.TrimRight(e.Output, "\n"); !isFraming(line) {
				res.lines = append(res.lines, line)
			}
		}
	}
}

// isFraming reports whether an output line is the testing package's own
// (a test starting, pausing, resuming or ending), not the test's.
func isFraming(line string) bool {
	s := strings.TrimSpace(line)
	for _, p := range []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME ", "--- PASS: ", "--- FAIL: ", "--- SKIP: "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// underTest reports whether test is name or one of its subtests.
func underTest(test, name string) bool {
	return test == name || strings.HasPrefix(test, name+"/")
}

// outputWithin is the output of name and of its subtests, in name order.
func outputWithin(run map[string]*testResult, name string) string {
	var b strings.Builder
	for _, test := range slices.Sorted(maps.Keys(run)) {
		if underTest(test, name) {
			for _, l := range run[test].lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// gapProblems compares a run of the contract, whose top test is root,
// with gaps (named below root), and says each way they disagree:
//
//   - a failure no gap covers: a test outside every gap that failed with
//     output of its own, or failed with no failed subtest to say why (a
//     test that fails only because a subtest did prints nothing itself);
//   - a gap that did not run, did not fail, or failed without showing
//     its symptom (then it failed for another reason than declared);
//   - a test that started and never ended (a crash or a timeout).
func gapProblems(root string, run map[string]*testResult, gaps map[string]wireGap) []string {
	top := run[root]
	switch {
	case top == nil || top.action == "":
		return []string{fmt.Sprintf("%s did not run to its end:\n%s", root, strings.Join(run[""].lines, "\n"))}
	case top.action == "skip":
		return []string{fmt.Sprintf("%s skipped:\n%s", root, strings.Join(top.lines, "\n"))}
	}
	var problems []string
	for _, g := range slices.Sorted(maps.Keys(gaps)) {
		full := root + "/" + g
		switch res := run[full]; {
		case res == nil:
			problems = append(problems, fmt.Sprintf("gap %s: no such test ran (renamed or removed? the gap must name a test)", g))
		case res.action != "fail":
			problems = append(problems, fmt.Sprintf("gap %s: the test did not fail (%s); if the server does it now, remove the gap: %s", g, res.action, gaps[g].why))
		case !strings.Contains(outputWithin(run, full), gaps[g].shows):
			problems = append(problems, fmt.Sprintf("gap %s: failed, but without %q, so not as declared (%s):\n%s", g, gaps[g].shows, gaps[g].why, outputWithin(run, full)))
		}
	}
	inGap := func(test string) bool {
		for g := range gaps {
			if underTest(test, root+"/"+g) {
				return true
			}
		}
		return false
	}
	for _, test := range slices.Sorted(maps.Keys(run)) {
		res := run[test]
		if !underTest(test, root) || inGap(test) {
			continue
		}
		switch {
		case res.action == "":
			problems = append(problems, fmt.Sprintf("%s never ended:\n%s", test, strings.Join(run[""].lines, "\n")))
		case res.action != "fail":
		case len(res.lines) > 0:
			problems = append(problems, fmt.Sprintf("%s failed, and no gap declares it:\n%s", test, strings.Join(res.lines, "\n")))
		case !failedSubtest(run, test):
			problems = append(problems, fmt.Sprintf("%s failed without saying why", test))
		}
	}
	return problems
}

func failedSubtest(run map[string]*testResult, name string) bool {
	for test, res := range run {
		if test != name && underTest(test, name) && res.action == "fail" {
			return true
		}
	}
	return false
}

// runTally counts the leaf tests below root (those with no subtests of
// their own): passed, and failed within a gap.
type runTally struct{ leaves, passed, gapped int }

func tally(root string, run map[string]*testResult, gaps map[string]wireGap) runTally {
	var t runTally
	for test, res := range run {
		if test == root || !underTest(test, root) || hasSubtests(run, test) {
			continue
		}
		t.leaves++
		switch {
		case res.action == "pass":
			t.passed++
		case res.action == "fail" && slices.ContainsFunc(slices.Collect(maps.Keys(gaps)), func(g string) bool { return underTest(test, root+"/"+g) }):
			t.gapped++
		}
	}
	return t
}

func hasSubtests(run map[string]*testResult, name string) bool {
	for test := range run {
		if strings.HasPrefix(test, name+"/") {
			return true
		}
	}
	return false
}

// events writes a test2json stream: each line "action test [output]".
func events(lines ...string) io.Reader {
	var b strings.Builder
	for _, l := range lines {
		action, rest, _ := strings.Cut(l, " ")
		test, output, _ := strings.Cut(rest, " ")
		if output != "" {
			output += "\n"
		}
		e, _ := json.Marshal(testEvent{Action: action, Test: test, Output: output})
		b.Write(e)
		b.WriteByte('\n')
	}
	return strings.NewReader(b.String())
}

func TestGapProblems(t *testing.T) {
	gaps := map[string]wireGap{
		"Query/ByKey": {why: "ignores the key", shows: "-want +got"},
	}
	// A run in which only the declared gap fails, as declared.
	asDeclared := []string{
		"output C/Query/ByKey === RUN   C/Query/ByKey",
		"output C/Query/ByKey     query.go:1: ids (-want +got):",
		"output C/Query/ByKey --- FAIL: C/Query/ByKey (0.00s)",
		"fail C/Query/ByKey",
		"pass C/Query/Paged",
		"output C/Query --- FAIL: C/Query (0.00s)",
		"fail C/Query",
		"pass C/Read",
		"fail C",
	}
	with := func(extra ...string) []string { return append(slices.Clone(asDeclared), extra...) }
	tests := []struct {
		name   string
		events []string
		want   []string // a word of each problem, in order
	}{
		{"AsDeclared", asDeclared, nil},
		{"UndeclaredFailure", with("output C/Write     items.go:9: error code \"\"", "fail C/Write"), []string{"C/Write failed, and no gap declares it"}},
		{"ParentFailsOnItsOwn", with("output C/Query     query.go:2: seeding failed"), []string{"C/Query failed, and no gap declares it"}},
		{"FailureWithoutReason", with("fail C/Silent"), []string{"C/Silent failed without saying why"}},
		{"NeverEnded", with("run C/Hung", "output  panic: boom"), []string{"C/Hung never ended"}},
		{"GapPasses", []string{"pass C/Query/ByKey", "pass C/Query", "pass C"}, []string{"the test did not fail"}},
		{"GapFailsOtherwise", []string{"output C/Query/ByKey     query.go:1: 500 from the store", "fail C/Query/ByKey", "fail C/Query", "fail C"}, []string{"not as declared"}},
		{"GapMissing", []string{"pass C/Read", "pass C"}, []string{"no such test ran"}},
		{"ContractSkipped", []string{"output C     cosmos_test.go:1: no Cosmos", "skip C"}, []string{"C skipped"}},
		{"ContractCrashed", []string{"run C", "output  panic: boom"}, []string{"did not run to its end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := readRun(events(tt.events...))
			if err != nil {
				t.Fatal(err)
			}
			got := gapProblems("C", run, gaps)
			if len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
	t.Run("Tally", func(t *testing.T) {
		run, _ := readRun(events(asDeclared...))
		if got, want := tally("C", run, gaps), (runTally{leaves: 3, passed: 2, gapped: 1}); got != want {
			t.Errorf("tally = %+v, want %+v", got, want)
		}
	})
}
