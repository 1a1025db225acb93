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

// testResult is how one test of a run ended, what it printed itself and
// what requests it sent.
type testResult struct {
	action string        // pass, fail or skip; "" if it never ended
	lines  []string      // its own output, without the framing lines (=== RUN, --- FAIL, ...) and requests
	sent   []sentRequest // the requests recorded while it ran (wirerecord_test.go), its subtests' apart
}

// readRun reads a test2json stream into each test's result, by full name.
// Output of no test (a panic's trace, "FAIL") is kept under "".
//
// test2json gives a line of output to the test that last started,
// resumed or ended, so a request a test sends after a subtest ended, or
// while a parallel subtest waits, comes under that subtest; readRun gives
// it to the nearest enclosing test still running instead. Tests that run
// at the same time cannot be told apart: the run this reads must run its
// parallel tests one at a time (-test.parallel=1).
func readRun(r io.Reader) (map[string]*testResult, error) {
	run := map[string]*testResult{}
	result := func(test string) *testResult {
		res := run[test]
		if res == nil {
			res = &testResult{}
			run[test] = res
		}
		return res
	}
	stopped := map[string]bool{} // ended, or paused until its parent ends
	partial := ""                // the start of a line test2json gave in parts
	dec := json.NewDecoder(r)
	for {
		var e testEvent
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			return run, nil
		} else if err != nil {
			return run, fmt.Errorf("test2json stream: %w", err)
		}
		res := result(e.Test)
		switch e.Action {
		case "run", "cont":
			stopped[e.Test] = false
		case "pause":
			stopped[e.Test] = true
		case "pass", "fail", "skip":
			if e.Test != "" {
				res.action = e.Action
			}
		case "output":
			// test2json splits a line longer than its buffer (1 KiB) into
			// events of its parts, one after the other; the last ends it.
			if !strings.HasSuffix(e.Output, "\n") {
				partial += e.Output
				continue
			}
			line := strings.TrimRight(partial+e.Output, "\n")
			partial = ""
			if js, ok := strings.CutPrefix(line, requestPrefix); ok {
				var req sentRequest
				if err := json.Unmarshal([]byte(js), &req); err != nil {
					return run, fmt.Errorf("a recorded request of %s: %w", e.Test, err)
				}
				owner := e.Test
				for owner != "" && stopped[owner] {
					owner = parentTest(owner)
				}
				result(owner).sent = append(result(owner).sent, req)
				continue
			}
			if isFraming(line) {
				if strings.HasPrefix(strings.TrimSpace(line), "--- ") {
					stopped[e.Test] = true
				}
				continue
			}
			res.lines = append(res.lines, line)
		}
	}
}

// parentTest is the test whose subtest test is, "" for a top test.
func parentTest(test string) string {
	i := strings.LastIndex(test, "/")
	if i < 0 {
		return ""
	}
	return test[:i]
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

// sentWithin is what name and its subtests sent, in name order.
func sentWithin(run map[string]*testResult, name string) []sentRequest {
	var sent []sentRequest
	for _, test := range slices.Sorted(maps.Keys(run)) {
		if underTest(test, name) {
			sent = append(sent, run[test].sent...)
		}
	}
	return sent
}

// gapProblems compares a run of the contract, whose top test is root,
// with gaps (named below root), and says each way they disagree:
//
//   - a failure no gap covers: a test outside every gap that failed with
//     output of its own, or failed with no failed subtest to say why (a
//     test that fails only because a subtest did prints nothing itself);
//   - a gap that did not run, did not fail, or failed without showing
//     its symptom (then it failed for another reason than declared);
//   - a gap whose test, with its subtests, did not send each request the
//     gap states (sent): then the adapter may be at fault, not the server;
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
		case len(gaps[g].sent) == 0:
			problems = append(problems, fmt.Sprintf("gap %s: states no request its test sends, so nothing shows the adapter sent what the gap is about", g))
		default:
			for _, p := range unsent(gaps[g].sent, sentWithin(run, full)) {
				problems = append(problems, fmt.Sprintf("gap %s: %s", g, p))
			}
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

// requestLine is the line the recorder writes for r.
func requestLine(r sentRequest) string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return requestPrefix + string(b)
}

func TestGapProblems(t *testing.T) {
	keyedQuery := request{method: "POST", resource: "docs", header: []string{"x-ms-documentdb-query: true", "x-ms-documentdb-partitionkey"}}
	gaps := map[string]wireGap{
		"Query/ByKey": {why: "ignores the key", shows: "-want +got", sent: sent(keyedQuery)},
	}
	const queryPath = "/dbs/d/colls/c/docs"
	// The query the gap is about, and the same without its partition key.
	withKey := requestLine(sentRequest{Method: "POST", Path: queryPath,
		Header: map[string]string{"x-ms-documentdb-query": "True", "x-ms-documentdb-partitionkey": `["p"]`}})
	withoutKey := requestLine(sentRequest{Method: "POST", Path: queryPath,
		Header: map[string]string{"x-ms-documentdb-query": "True"}})
	// A run in which only the declared gap fails, as declared, after
	// sending the request it states.
	asDeclared := []string{
		"run C/Query/ByKey",
		"output C/Query/ByKey === RUN   C/Query/ByKey",
		"output C/Query/ByKey " + withKey,
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
		// The gap's test failed as declared, but its query lacked the
		// partition key: the server's gap would hide the adapter's fault.
		{"GapRequestLacksHeader", slices.Replace(slices.Clone(asDeclared), 2, 3, "output C/Query/ByKey "+withoutKey),
			[]string{"the closest lacks x-ms-documentdb-partitionkey"}},
		{"GapSentNothing", slices.Delete(slices.Clone(asDeclared), 2, 3), []string{"sent no POST docs at all"}},
		// A request the parent sends after its subtest ended is the
		// parent's, though test2json gives it to the subtest.
		{"RequestAfterSubtestEnded", slices.Concat(slices.Delete(slices.Clone(asDeclared), 2, 3),
			[]string{"output C/Query/ByKey " + withKey}), []string{"sent no POST docs at all"}},
		// Likewise while the subtest waits to run in parallel.
		{"RequestWhilePaused", slices.Concat([]string{"run C/Query/ByKey", "pause C/Query/ByKey",
			"output C/Query/ByKey " + withKey, "cont C/Query/ByKey"}, slices.Delete(slices.Clone(asDeclared), 2, 3)),
			[]string{"sent no POST docs at all"}},
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
	t.Run("GapStatesNoRequest", func(t *testing.T) {
		run, _ := readRun(events(asDeclared...))
		unstated := map[string]wireGap{"Query/ByKey": {why: "ignores the key", shows: "-want +got"}}
		got := gapProblems("C", run, unstated)
		if len(got) != 1 || !strings.Contains(got[0], "states no request") {
			t.Errorf("problems = %q, want one saying the gap states no request", got)
		}
	})
	t.Run("Attribution", func(t *testing.T) {
		run, err := readRun(events(slices.Concat(asDeclared, []string{"output C/Query/ByKey " + withoutKey})...))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(run["C/Query/ByKey"].sent); n != 1 {
			t.Errorf("C/Query/ByKey sent %d requests, want 1", n)
		}
		// C/Query ended too (its --- FAIL line), so the request is C's.
		if n := len(run["C"].sent); n != 1 {
			t.Errorf("C sent %d requests, want 1", n)
		}
		for _, res := range run {
			for _, l := range res.lines {
				if strings.HasPrefix(l, requestPrefix) {
					t.Errorf("a request line is kept as output: %s", l)
				}
			}
		}
	})
	t.Run("LineInParts", func(t *testing.T) {
		// test2json's events of one long line: parts, the last with "\n".
		var b strings.Builder
		line := withKey + "\n"
		for _, part := range []string{line[:10], line[10:40], line[40:]} {
			e, _ := json.Marshal(testEvent{Action: "output", Test: "C/Query/ByKey", Output: part})
			b.Write(e)
		}
		run, err := readRun(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if got := run["C/Query/ByKey"]; len(got.sent) != 1 || len(got.lines) != 0 {
			t.Errorf("sent %d requests and printed %q, want the one request", len(got.sent), got.lines)
		}
	})
	t.Run("BadRequestLine", func(t *testing.T) {
		if _, err := readRun(events("output C/Read " + requestPrefix + "{")); err == nil {
			t.Error("readRun took a request line that is not JSON")
		}
	})
	t.Run("Tally", func(t *testing.T) {
		run, _ := readRun(events(asDeclared...))
		if got, want := tally("C", run, gaps), (runTally{leaves: 3, passed: 2, gapped: 1}); got != want {
			t.Errorf("tally = %+v, want %+v", got, want)
		}
	})
}
