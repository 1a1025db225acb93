//go:build workshop

package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWorkshopDocs runs the workshop's commands as an attendee does,
// verbatim and in order, on a fresh shop of the setup's (sample data, the
// default 4 partitions), and compares every output the text shows with
// the one the command prints. A change that moves a figure (an RU, an op
// count, a count, a price) fails here until the text follows: the text's
// figures are written by the commands that measure them.
//
// What runs (docs/workshop/README.md, "Checking the workshop"):
//
//   - Every top-level ```sh block of docs/workshop/README.md and of the
//     modules, outside <details> (exercises and solutions are the
//     attendee's), in one bash per run (set -o pipefail), so that the
//     variables and functions a block defines ($SHOP, token, cost, $ETAG)
//     reach the blocks after it, as in the attendee's terminal.
//   - A block's output is the first ```text or ```json block after it,
//     before any other fenced block; the comparison is exact after
//     normalize, with … in the text standing for any run of characters
//     within a line.
//   - <!-- varies: REASON --> right before an output block runs its
//     command but does not compare; <!-- skip: REASON --> right before a
//     command block does not run it. Both need a reason.
//   - A block that only starts a shop (`... go run ./cmd/shop` with no
//     subcommand) runs in the background; its output is what the shop
//     printed until it listened. The setup's own start is the test's shop.
//
// A module runs after the modules it needs (workshopNeeds, the README's
// dependency table), which run uncompared, so -run TestWorkshopDocs/07
// checks module 07 alone:
//
//	go test -tags workshop -run 'TestWorkshopDocs$' ./cmd/shop/          # every module
//	go test -tags workshop -run 'TestWorkshopDocs/07' ./cmd/shop/        # one module
func TestWorkshopDocs(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the workshop's commands need jq")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	modules, err := filepath.Glob(filepath.Join(root, "docs/workshop/[0-9][0-9]-*.md"))
	if err != nil || len(modules) == 0 {
		t.Fatalf("no modules under docs/workshop: %v", err)
	}
	want := selectedModules()

	// The modules to run: those selected and those they need, in order.
	run := map[string]bool{}
	var need func(m string)
	need = func(m string) {
		if run[m] {
			return
		}
		run[m] = true
		for _, d := range workshopNeeds[m] {
			need(d)
		}
	}
	for _, f := range modules {
		if m := filepath.Base(f)[:2]; want(m) {
			need(m)
		}
	}
	if len(run) == 0 {
		return
	}

	base, _ := runShop(t, workshopShopEnv(t.TempDir()))
	sh := startBash(t, root, base)
	setup := parseBlocks(t, filepath.Join(root, "docs/workshop/README.md"))
	sh.runBlocks(t, setup, true) // every module needs it: it runs with each
	if t.Failed() {
		t.FailNow()
	}
	for _, f := range modules {
		m := filepath.Base(f)[:2]
		if !run[m] {
			continue
		}
		blocks := parseBlocks(t, f)
		if !want(m) {
			sh.runBlocks(t, blocks, false) // needed by a later module: its state, not its text
			continue
		}
		t.Run(m, func(t *testing.T) { sh.runBlocks(t, blocks, true) })
	}
}

// workshopNeeds is the dependency table of docs/workshop/README.md: the
// modules whose state a module's commands build on.
var workshopNeeds = map[string][]string{
	"04": {"02", "03"},
	"06": {"04", "05"},
	"07": {"03", "06"},
	"13": {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"},
}

// workshopShopEnv is the shop of the workshop's setup: `SHOP_DATA_DIR=$(mktemp -d)
// go run ./cmd/shop` with the defaults (sample data, 4 partitions, dev
// mode on loopback, the default rate limits), on a free port.
func workshopShopEnv(dir string) []string {
	return []string{"SHOP_ADDR=127.0.0.1:0", "SHOP_DATA_DIR=" + dir, "SHOP_LOG_LEVEL=error"}
}

// selectedModules reports which modules -test.run selects: a module is
// selected by TestWorkshopDocs alone, or by TestWorkshopDocs/NN.
func selectedModules() func(string) bool {
	pat := ""
	if f := flag.Lookup("test.run"); f != nil {
		pat = f.Value.String()
	}
	_, sub, ok := strings.Cut(pat, "/")
	if !ok || sub == "" {
		return func(string) bool { return true }
	}
	re, err := regexp.Compile(sub)
	if err != nil {
		return func(string) bool { return true }
	}
	return func(m string) bool { return re.MatchString(m) }
}

// A block is one command block of the text and the output it shows.
type block struct {
	file   string
	line   int    // of the command block's fence
	cmd    string // the commands, verbatim
	output string // the output shown, "" if none
	outAt  int    // the line of the output block's opening fence
	hasOut bool
	skip   string // <!-- skip: reason -->
	varies string // <!-- varies: reason -->
}

var (
	fenceRE  = regexp.MustCompile("^```([a-z]*)\\s*$")
	markRE   = regexp.MustCompile(`^<!--\s*(skip|varies):\s*(.+?)\s*-->\s*$`)
	serverRE = regexp.MustCompile(`(?m)^(?:[A-Z_]+=(?:\$\([^)]*\)|\S+) )*go run \./cmd/shop\s*$`)
)

// parseBlocks reads the top-level command blocks of a file outside
// <details>, each with the output block that follows it.
func parseBlocks(t *testing.T, path string) []block {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []block
	var cur *block // the command block waiting for its output
	details := 0
	mark, reason := "", ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "<details"):
			details++
			continue
		case strings.HasPrefix(l, "</details>"):
			details--
			continue
		}
		if m := markRE.FindStringSubmatch(l); m != nil {
			mark, reason = m[1], m[2]
			continue
		}
		m := fenceRE.FindStringSubmatch(l)
		if m == nil {
			if strings.TrimSpace(l) != "" && mark != "" {
				t.Fatalf("%s:%d: a <!-- %s: --> mark must come right before a fenced block", path, i, mark)
			}
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		text := strings.Join(body, "\n")
		lang := m[1]
		if details > 0 {
			cur, mark = nil, ""
			continue
		}
		switch {
		case lang == "sh":
			if cur != nil {
				blocks = append(blocks, *cur)
			}
			cur = &block{file: filepath.Base(path), line: start + 1, cmd: text}
			if mark == "skip" {
				cur.skip = reason
			} else if mark != "" {
				t.Fatalf("%s:%d: <!-- %s: --> before a command block", path, start+1, mark)
			}
		case (lang == "text" || lang == "json") && cur != nil:
			cur.output, cur.hasOut, cur.outAt = text, true, start
			if mark == "varies" {
				cur.varies = reason
			} else if mark != "" {
				t.Fatalf("%s:%d: <!-- %s: --> before an output block", path, start+1, mark)
			}
			blocks = append(blocks, *cur)
			cur = nil
		default:
			if cur != nil {
				blocks = append(blocks, *cur)
				cur = nil
			}
		}
		mark = ""
	}
	if cur != nil {
		blocks = append(blocks, *cur)
	}
	return blocks
}

// A bashSession is the attendee's terminal 2: one bash whose variables and
// functions live from block to block.
type bashSession struct {
	base  string // the test shop's URL, which the text spells http://localhost:8080
	dir   string
	in    io.Writer
	out   *bufio.Reader
	n     int
	shops int
	shift map[string]int // lines -write added to a file so far
	pids  map[string]int // the shops started by the text, by address
}

func startBash(t *testing.T, root, base string) *bashSession {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	s := &bashSession{base: base, dir: dir, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() {
		// The shops the text started (modules 09 and 10), each in a process
		// group of its own: Ctrl-C, then a kill if it does not end.
		for _, pid := range s.pids {
			syscall.Kill(-pid, syscall.SIGINT)
		}
		for _, pid := range s.pids {
			for i := 0; i < 100 && syscall.Kill(-pid, 0) == nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
	s.exec(t, "set -o pipefail", time.Minute)
	return s
}

// exec runs script in the session and returns what it printed (stdout and
// stderr, as the terminal shows them) and its status.
func (s *bashSession) exec(t *testing.T, script string, timeout time.Duration) (string, int) {
	t.Helper()
	s.n++
	end := fmt.Sprintf("__workshop_end_%d__", s.n)
	// The block runs in the session itself, not a subshell, so that what it
	// defines stays; its last newline-less line is ended before the marker.
	fmt.Fprintf(s.in, "%s\n__st=$?; printf '\\n%s %%d\\n' $__st\n", script, end)
	type result struct {
		out    string
		status int
	}
	got := make(chan result, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := s.out.ReadString('\n')
			if rest, ok := strings.CutPrefix(line, end+" "); ok {
				var st int
				fmt.Sscan(rest, &st)
				out := strings.TrimSuffix(b.String(), "\n")
				got <- result{out, st}
				return
			}
			b.WriteString(line)
			if err != nil {
				got <- result{b.String(), -1}
				return
			}
		}
	}()
	select {
	case r := <-got:
		return r.out, r.status
	case <-time.After(timeout):
		t.Fatalf("timed out after %v running:\n%s", timeout, script)
	}
	return "", 0
}

// runBlocks runs blocks in order; with compare, it fails each whose output
// differs from the text's.
func (s *bashSession) runBlocks(t *testing.T, blocks []block, compare bool) {
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		if b.skip != "" {
			t.Logf("%s: skipped (%s)", where, b.skip)
			continue
		}
		cmd := strings.ReplaceAll(b.cmd, "http://localhost:8080", s.base)
		var out string
		lines := strings.Split(cmd, "\n")
		if last := lines[len(lines)-1]; serverRE.MatchString(last) {
			if strings.Contains(b.file, "README") {
				continue // the setup's shop: the test's own
			}
			// The lines before the shop's (export HOTDIR=...) run first.
			if len(lines) > 1 {
				if o, st := s.exec(t, strings.Join(lines[:len(lines)-1], "\n"), time.Minute); st != 0 {
					t.Errorf("%s: exit status %d:\n%s\n--- printed:\n%s", where, st, b.cmd, o)
					continue
				}
			}
			out = s.startShop(t, last)
		} else {
			var st int
			out, st = s.exec(t, cmd, 3*time.Minute)
			if st != 0 {
				t.Errorf("%s: exit status %d:\n%s\n--- printed:\n%s", where, st, b.cmd, out)
				continue
			}
		}
		if !compare || !b.hasOut {
			continue
		}
		if b.varies != "" {
			t.Logf("%s: not compared (varies: %s)", where, b.varies)
			continue
		}
		printed := strings.ReplaceAll(out, s.base, "http://localhost:8080")
		if !outputMatches(b.output, printed) {
			if *writeDocs {
				if s.shift == nil {
					s.shift = map[string]int{}
				}
				b.outAt += s.shift[b.file]
				s.shift[b.file] += rewriteOutput(t, b, printed)
			}
			t.Errorf("%s: the output moved:\n$ %s\n--- the text shows:\n%s\n--- the command printed:\n%s",
				where, b.cmd, b.output, out)
		}
	}
}

// writeDocs makes the check write what the commands printed over the
// outputs that moved, so that a figure in the text is the one its command
// measured, never typed: go test -tags workshop -run TestWorkshopDocs/05
// ./cmd/shop/ -args -write. Review the diff: an output that moved for a
// reason that is no figure's needs a normalizer or a varies mark instead.
var writeDocs = flag.Bool("write", false, "write the printed outputs over the workshop text's that moved")

// rewriteOutput replaces b's output block in its file with printed and
// returns how many lines that added.
func rewriteOutput(t *testing.T, b block, printed string) int {
	t.Helper()
	path := filepath.Join("../../docs/workshop", b.file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	end := b.outAt + 1
	for end < len(lines) && lines[end] != "```" {
		end++
	}
	if strings.Join(lines[b.outAt+1:end], "\n") != b.output {
		t.Fatalf("%s:%d: the file changed under the check", b.file, b.outAt+1)
	}
	printed = strings.TrimRight(printed, "\n")
	// The test's mktemp -d directories, as the attendee's would read.
	printed = regexp.MustCompile(`/tmp/TestWorkshopDocs\d+/\d+/tmp\.`).ReplaceAllString(printed, "/tmp/tmp.")
	out := append(append(append([]string{}, lines[:b.outAt+1]...), strings.Split(printed, "\n")...), lines[end:]...)
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return len(out) - len(lines)
}

// startShop runs a block that starts a shop in the background, as the
// attendee does in another terminal, and returns what the shop printed
// until it listened.
func (s *bashSession) startShop(t *testing.T, cmd string) string {
	t.Helper()
	s.shops++
	log := filepath.Join(s.dir, fmt.Sprintf("shop%d.log", s.shops))
	// A shop started again on the same address is the text's "stop it
	// (Ctrl-C) and start it again": the old one gets its SIGINT first.
	addr := regexp.MustCompile(`SHOP_ADDR=(\S+)`).FindStringSubmatch(cmd)
	if addr != nil {
		if pid, ok := s.pids[addr[1]]; ok {
			s.exec(t, fmt.Sprintf("kill -INT -- -%d; while kill -0 -- -%d 2>/dev/null; do sleep 0.2; done", pid, pid), time.Minute)
		}
	}
	// As in a terminal of its own: a process group of its own (set -m),
	// and no job of this one (disown), so that a block's `wait` waits for
	// its own jobs only.
	out, _ := s.exec(t, fmt.Sprintf("set -m; (%s) >%s 2>&1 </dev/null & __pid=$!; disown $__pid; set +m; echo $__pid", cmd, log), time.Minute)
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("%s: no pid: %q", cmd, out)
	}
	if s.pids == nil {
		s.pids = map[string]int{}
	}
	key := fmt.Sprint(pid)
	if addr != nil {
		key = addr[1]
	}
	s.pids[key] = pid
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(log)
		if i := bytes.Index(data, []byte("shop: listening on ")); i >= 0 {
			if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
				return string(data[:i+j])
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	data, _ := os.ReadFile(log)
	t.Fatalf("%s: the shop did not listen within 3 minutes:\n%s", cmd, data)
	return ""
}

// normalizers are the one place that says what legitimately varies from
// run to run and is not compared: each is replaced by a placeholder in
// both the text's output and the command's. Figures (RU, op counts,
// counts, prices) are not among them: they are compared exactly.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	// Timestamps, then dates: the day and time of the run.
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?`), "<time>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`), "<date>"},
	// Order ids carry the time they were taken and a random suffix.
	{regexp.MustCompile(`\bo-\d{8}T\d{6}-[0-9a-f]{12}\b`), "o-<id>"},
	// ETags: the store's session and the position of the write.
	{regexp.MustCompile(`\b[0-9a-f]{8}-0000-0000-0000-[0-9a-f]{12}\b`), "<etag>"},
	// Time spent in the store (Server-Timing dur=), and a cached page's age.
	{regexp.MustCompile(`dur=\d+(\.\d+)?`), "dur=<d>"},
	{regexp.MustCompile(`age \d+(\.\d+)? s`), "age <d> s"},
	// Directories of mktemp -d: the attendee's under /tmp, the test's
	// under its own temporary directory.
	{regexp.MustCompile(`(/[^\s/]+)*/tmp\.[A-Za-z0-9]{10}\b`), "<tmpdir>"},
}

func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.TrimRight(l, " \t\r"))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// outputMatches compares after normalize; … in the text stands for any
// run of characters within one line (the text's own elision).
func outputMatches(text, got string) bool {
	text, got = normalize(text), normalize(got)
	if text == got {
		return true
	}
	tl, gl := strings.Split(text, "\n"), strings.Split(got, "\n")
	if len(tl) != len(gl) {
		return false
	}
	for i := range tl {
		if tl[i] == gl[i] {
			continue
		}
		parts := strings.Split(tl[i], "…")
		if len(parts) == 1 {
			return false
		}
		for j, p := range parts {
			parts[j] = regexp.QuoteMeta(p)
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*?") + "$").MatchString(gl[i]) {
			return false
		}
	}
	return true
}
