package embedded

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/store"
)

const durabilityEnv = "EMBEDDED_DURABILITY_DB"

// TestHelperProcess is the child of TestCommittedWritesSurviveKill: it
// writes items and prints each id once its Create has returned.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(durabilityEnv)
	if path == "" {
		t.Skip("runs only as the child of TestCommittedWritesSurviveKill")
	}
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	def := store.ContainerDef{ID: "c", PartitionKeyPath: "/pk"}
	if _, err := s.EnsureContainer(bg, def); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c := s.Container("c")
	for i := range 100000 {
		id := fmt.Sprintf("item-%06d", i)
		pk := fmt.Sprintf("p%d", i%16)
		if _, err := c.Create(bg, pk, doc(pk, id, "payload", strings.Repeat("x", 512))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stdout, "%s %s\n", pk, id)
	}
	os.Exit(0)
}

// TestCommittedWritesSurviveKill: what a call committed before returning
// survives kill -9 of the process (every commit is fsynced).
func TestCommittedWritesSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "shop.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), durabilityEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var acked []string
	for len(acked) < 300 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("child stopped after %d items: %v", len(acked), err)
		}
		acked = append(acked, strings.TrimSuffix(line, "\n"))
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code, no Close
		t.Fatal(err)
	}
	// Lines the child printed before it died are acknowledged writes too;
	// a last line without its newline was cut mid-print and is not.
	rest, _ := io.ReadAll(r)
	for _, line := range strings.SplitAfter(string(rest), "\n") {
		if strings.HasSuffix(line, "\n") {
			acked = append(acked, strings.TrimSuffix(line, "\n"))
		}
	}
	_ = cmd.Wait()

	s := openAt(t, path, Options{})
	c := s.Container("c")
	for _, line := range acked {
		pk, id, _ := strings.Cut(line, " ")
		if _, err := c.Read(bg, pk, id); err != nil {
			t.Errorf("acknowledged write %s lost after kill -9: %v", id, err)
		}
	}
	t.Logf("%d acknowledged writes, all present after kill -9", len(acked))
}
