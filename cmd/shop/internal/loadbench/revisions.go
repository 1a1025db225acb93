package loadbench

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// revision is the shop built at a git revision of this repository, so
// that `shop bench --revisions` measures a change against the code before
// it, on the same data, in the same run.
type revision struct {
	Rev     string `json:"rev"`
	Subject string `json:"subject"`
	bin     string
	dir     string
}

// buildRevision extracts rev of the repository the bench runs in (git
// archive) into a temporary directory and builds its cmd/shop there.
func buildRevision(ctx context.Context, rev string) (revision, error) {
	short, err := git(ctx, "rev-parse", "--short", rev+"^{commit}")
	if err != nil {
		return revision{}, fmt.Errorf("revision %q: %w", rev, err)
	}
	subject, err := git(ctx, "log", "-1", "--format=%s", short)
	if err != nil {
		return revision{}, err
	}
	dir, err := os.MkdirTemp("", "shop-bench-rev-")
	if err != nil {
		return revision{}, err
	}
	r := revision{Rev: short, Subject: subject, dir: dir, bin: filepath.Join(dir, "shop-"+short)}
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", short)
	var out, stderr bytes.Buffer
	archive.Stdout, archive.Stderr = &out, &stderr
	if err := archive.Run(); err != nil {
		r.remove()
		return revision{}, fmt.Errorf("git archive %s: %w: %s", short, err, stderr.String())
	}
	if err := untar(&out, filepath.Join(dir, "src")); err != nil {
		r.remove()
		return revision{}, err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", r.bin, "./cmd/shop")
	build.Dir = filepath.Join(dir, "src")
	if b, err := build.CombinedOutput(); err != nil {
		r.remove()
		return revision{}, fmt.Errorf("building %s: %w: %s", short, err, b)
	}
	return r, nil
}

func (r revision) remove() { _ = os.RemoveAll(r.dir) }

// buildRevisions builds each of revs (buildRevision) and returns them
// with a function that removes them all.
func buildRevisions(ctx context.Context, revs []string) ([]revision, func(), error) {
	var built []revision
	remove := func() {
		for _, r := range built {
			r.remove()
		}
	}
	for _, rev := range revs {
		r, err := buildRevision(ctx, rev)
		if err != nil {
			remove()
			return nil, nil, err
		}
		built = append(built, r)
	}
	return built, remove, nil
}

func git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// untar writes the regular files and directories of a tar stream under
// dir; any other entry, and any path leaving dir, is refused.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, h.Name)
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink, tar.TypeXGlobalHeader:
			// The root openapi.yaml is a link to api/openapi.yaml; a build
			// needs neither.
		default:
			return fmt.Errorf("archive entry %q: type %c not supported", h.Name, h.Typeflag)
		}
	}
}
