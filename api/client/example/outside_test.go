package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildsAsAnOutsideModule builds this example the way an adopter's
// program is built: in a module of its own, which requires the shop's
// module by its path and, until that path is published, points it at
// this checkout with a replace directive (README, "The Go client from
// another module"). The module path must be one the go command can
// download once published: its first element has a dot (a host), as
// `go get` requires of every path outside the standard library.
func TestBuildsAsAnOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own (seconds); run without -short")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := modulePath(t, root)
	if host, _, _ := strings.Cut(path, "/"); !strings.Contains(host, ".") {
		t.Fatalf("module path %q: its first element has no dot, so no other module can go get it", path)
	}

	dir := t.TempDir()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	goMod := "module example.com/adopter\n\ngo 1.26.0\n\n" +
		"require " + path + " v0.0.0-00010101000000-000000000000\n\n" +
		"replace " + path + " => " + root + "\n"
	for name, b := range map[string][]byte{"main.go": src, "go.mod": []byte(goMod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Offline: every module the client's packages import is in the module
	// cache already, since this repository's own build used it, and the
	// build (-mod=mod) adds their requirements to go.mod. Not go mod tidy:
	// it also wants the test dependencies of every dependency, which no
	// build of this repository downloads, so on a fresh machine it failed.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	for _, args := range [][]string{{"build", "-o", os.DevNull, "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in the adopter's module: %v\n%s\ngo.mod:\n%s", strings.Join(args, " "), err, out, goMod)
		}
	}
}

// modulePath reads the module path from root's go.mod.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("module ")); ok {
			return string(bytes.TrimSpace(rest))
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}
