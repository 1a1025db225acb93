// Package report is the one report writer of `shop cost` and `shop bench`:
// the machine a measurement ran on, the goals it is judged by, and the
// output as text, JSON, markdown or the command's generated section of a
// markdown file (docs/performance.md).
package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
)

// Machine is what a measurement ran on: figures mean little without it.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpuModel"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
	// LoadAverage is /proc/loadavg when the run started: other work on
	// the machine moves every figure.
	LoadAverage string `json:"loadAverage"`
}

// ThisMachine describes the machine the process runs on, now.
func ThisMachine() Machine {
	return Machine{
		CPUs:        runtime.NumCPU(),
		CPUModel:    cpuModel(),
		GoVersion:   runtime.Version(),
		OS:          runtime.GOOS + "/" + runtime.GOARCH,
		LoadAverage: loadAverage(),
	}
}

func (m Machine) String() string {
	return fmt.Sprintf("%d CPUs (%s), %s, %s; load average %s at the start", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.LoadAverage)
}

// loadAverage is the 1, 5 and 15 minute load averages (Linux).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// cpuModel reads the first "model name" of /proc/cpuinfo (Linux).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// docsHeader opens a performance document that does not exist yet.
const docsHeader = `# Performance

What the shop's modeling choices cost and how fast its HTTP path runs,
measured on one machine. Every section below is written by the command
named in it (` + "`--write-docs`" + `); rerun that command to refresh it rather
than editing the figures by hand.
`

// hasDocSection reports whether the markdown file at path holds the begin
// marker of the named section.
func hasDocSection(path, name string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return strings.Contains(string(b), "<!-- begin: shop "+name+" (generated) -->\n"), nil
}

// writeDocSection replaces the named section of a markdown file (between
// its begin and end markers) with body, appending the section if the file
// has none yet and creating the file if needed.
func writeDocSection(path, name, body string) error {
	begin := "<!-- begin: shop " + name + " (generated) -->\n"
	end := "<!-- end: shop " + name + " -->\n"
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = []byte(docsHeader), nil
	}
	if err != nil {
		return err
	}
	doc := string(old)
	section := begin + strings.TrimRight(body, "\n") + "\n" + end
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	switch {
	case i >= 0 && j > i:
		doc = doc[:i] + section + doc[j+len(end):]
	case i >= 0 || j >= 0:
		return fmt.Errorf("%s: the %s section's markers are broken; fix or remove them", path, name)
	default:
		doc = strings.TrimRight(doc, "\n") + "\n\n" + section
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// Output is how `shop cost` and `shop bench` print their report.
type Output struct {
	JSON, Markdown bool
	// Docs is the file (or the comma-separated files) to write the
	// markdown into: the first gets the report's section, added at its
	// end if it has none; each other file gets the sections whose markers
	// it holds, the report's own and Parts (a workshop module showing a
	// table where its readers work).
	Docs string
	// Parts are smaller named sections of the same run (name → markdown),
	// written only where a file holds their markers.
	Parts map[string]func(io.Writer)
}

// Write prints rep as JSON, markdown or text, or writes its markdown into
// the named generated section of out.Docs.
func Write(stdout io.Writer, rep any, out Output, section string, markdown, text func(io.Writer)) error {
	switch {
	case out.Docs != "":
		for i, path := range strings.Split(out.Docs, ",") {
			path = strings.TrimSpace(path)
			parts := map[string]func(io.Writer){section: markdown}
			for name, w := range out.Parts {
				parts[name] = w
			}
			for _, name := range slices.Sorted(maps.Keys(parts)) {
				if i > 0 || name != section {
					if has, err := hasDocSection(path, name); err != nil {
						return err
					} else if !has {
						continue
					}
				}
				var b strings.Builder
				parts[name](&b)
				if err := writeDocSection(path, name, b.String()); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "wrote the %s section of %s\n", name, path)
			}
		}
	case out.JSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case out.Markdown:
		markdown(stdout)
	default:
		text(stdout)
	}
	return nil
}

// Goal is one of the targets and how the run did against it.
type Goal struct {
	Name string  `json:"name"`
	Want string  `json:"want"`
	Got  float64 `json:"got"`
	Unit string  `json:"unit"`
	Met  bool    `json:"met"`
}

// MetText is how the reports print whether a goal was met.
func MetText(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

// Round2 rounds v to two decimals.
func Round2(v float64) float64 { return math.Round(v*100) / 100 }
