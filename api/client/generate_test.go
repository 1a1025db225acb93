package client_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent runs the go:generate command of doc.go, with
// its output to stdout instead of the file it names, and compares: a spec
// or setting changed without `go generate ./...`, or a hand edit of the
// generated file, fails here (and so in CI).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for line := range strings.Lines(string(src)) {
		if cmd, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args = strings.Fields(cmd)
		}
	}
	out := slices.Index(args, "-o")
	if len(args) == 0 || args[0] != "go" || out < 0 || out+1 >= len(args) {
		t.Fatalf("doc.go: no `//go:generate go ... -o FILE` line (found %q)", args)
	}
	file := args[out+1]
	args = slices.Delete(args, out, out+2)

	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what %s makes of the spec: run go generate ./api/client", file, strings.Join(args, " "))
	}
}
