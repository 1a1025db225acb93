package loadbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// childShop is `shop serve` running as a process of its own, as people
// run it: the load comes from another process (this one, or wrk), so the
// shop's runtime (scheduler, GC) serves requests and nothing else.
type childShop struct {
	name string
	cmd  *exec.Cmd
	url  string
	// pprof is the base URL of its profiles ("" when the binary has no
	// SHOP_PPROF_ADDR setting, as an older revision may not).
	pprof string
	// tail keeps the last lines it printed, for the error when it dies.
	tail   *lineTail
	exited chan struct{}
}

// shopEnv is the environment of a child shop: this process's, without any
// SHOP_ setting (the shop runs with its defaults), plus the given ones.
func shopEnv(settings map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHOP_") {
			env = append(env, kv)
		}
	}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	return env
}

// startChild runs `bin serve` on the embedded store in dataDir, listening
// on a free loopback port, with the settings given and every other at its
// default, and waits until it listens.
func startChild(ctx context.Context, name, bin, dataDir string, settings map[string]string) (*childShop, error) {
	cmd := exec.Command(bin, "serve")
	env := map[string]string{
		"SHOP_DATA_DIR":   dataDir,
		"SHOP_ADDR":       "127.0.0.1:0",
		"SHOP_PPROF_ADDR": "127.0.0.1:0",
	}
	maps.Copy(env, settings)
	cmd.Env = shopEnv(env)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	c := &childShop{name: name, cmd: cmd, tail: &lineTail{max: 20}, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		// Read everything it prints (its request log included), so that
		// it never blocks on a full pipe; remember the lines that say
		// where it listens.
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			c.tail.add(line)
			if u, ok := strings.CutPrefix(line, "shop: profiles on "); ok {
				c.pprof = strings.TrimSuffix(u, "/debug/pprof/")
			}
			if u, ok := strings.CutPrefix(line, "shop: listening on "); ok {
				c.url = u
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	select {
	case <-ready:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("%s exited before listening: %s", bin, c.tail)
	case <-time.After(2 * time.Minute):
		c.stop()
		return nil, fmt.Errorf("%s did not listen within 2 minutes: %s", bin, c.tail)
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// alive reports an error if the child has exited.
func (c *childShop) alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited: %s", c.name, c.tail)
	default:
		return nil
	}
}

// stop asks the shop to shut down as SIGTERM does in production, and kills
// it if it has not within the shutdown grace.
func (c *childShop) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// kill ends the shop with SIGKILL, as a crash or `kill -9` does: no
// request finishes, no lease is released, nothing is flushed beyond what
// each commit wrote (the embedded store syncs every commit).
func (c *childShop) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTicks = 100

// cpuTime is the CPU time the child has used, user and system.
func (c *childShop) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis are plain: utime and stime are the 12th and
	// 13th of them.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// mem is the child's resident memory now and at its peak.
func (c *childShop) mem() memSample {
	return readMemOf(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
}

// lineTail keeps the last lines of an output.
type lineTail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// memSampler follows a child's resident memory while the runs go on: the
// peak, and what it was made of at the peak.
type memSampler struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
	// peak is the sample of the highest VmRSS, peakAnon the highest
	// RssAnon (the heap, stacks and buffers, without bbolt's file).
	mu       sync.Mutex
	peak     memSample
	peakAnon int64
}

// peaks returns the highest VmRSS and RssAnon sampled so far.
func (s *memSampler) peaks() (rssKB, anonKB int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak.RSSKB, s.peakAnon
}

func sampleMem(c *childShop, every time.Duration) *memSampler {
	s := &memSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			m := c.mem()
			s.mu.Lock()
			if m.RSSKB > s.peak.RSSKB {
				s.peak = m
			}
			s.peakAnon = max(s.peakAnon, m.AnonKB)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling; the peaks are final once it returns. Calling it
// again does nothing.
func (s *memSampler) Stop() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}
