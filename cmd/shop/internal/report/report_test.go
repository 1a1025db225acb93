package report

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteDocSection(t *testing.T) {
	costSection := "<!-- begin: shop cost (generated) -->\nold cost\n<!-- end: shop cost -->\n"
	benchSection := "<!-- begin: shop bench (generated) -->\nbench\n<!-- end: shop bench -->\n"
	tests := []struct {
		name    string
		before  string // "" = no file
		want    string
		wantErr bool
	}{
		{
			name: "NewFile",
			want: docsHeader + "\n" + strings.Replace(costSection, "old cost", "new cost", 1),
		},
		{
			name:   "ReplacesOnlyItsSection",
			before: "# Title\n\n" + costSection + "\n" + benchSection,
			want:   "# Title\n\n" + strings.Replace(costSection, "old cost", "new cost", 1) + "\n" + benchSection,
		},
		{
			name:   "AppendsAfterOtherSections",
			before: "# Title\n\n" + benchSection,
			want:   "# Title\n\n" + benchSection + "\n" + strings.Replace(costSection, "old cost", "new cost", 1),
		},
		{
			name:    "BrokenMarkers",
			before:  "# Title\n\n<!-- begin: shop cost (generated) -->\nno end\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "performance.md")
			if tt.before != "" {
				if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := writeDocSection(path, "cost", "new cost\n")
			if tt.wantErr {
				if err == nil {
					t.Fatal("writeDocSection succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestWriteIntoSeveralFiles: the first file gets the report's section;
// another gets only the sections whose markers it holds, a part among
// them, and nothing is appended to it.
func TestWriteIntoSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	perf, module := filepath.Join(dir, "performance.md"), filepath.Join(dir, "module.md")
	moduleBefore := "# Module\n\n<!-- begin: shop cost part (generated) -->\nold\n<!-- end: shop cost part -->\n\nThe end.\n"
	if err := os.WriteFile(module, []byte(moduleBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	text := func(s string) func(w io.Writer) { return func(w io.Writer) { io.WriteString(w, s) } }
	out := Output{Docs: perf + ", " + module, Parts: map[string]func(io.Writer){"cost part": text("part\n")}}
	if err := Write(io.Discard, nil, out, "cost", text("whole\n"), text("")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(perf)
	if want := docsHeader + "\n<!-- begin: shop cost (generated) -->\nwhole\n<!-- end: shop cost -->\n"; string(got) != want {
		t.Errorf("first file:\n%s\nwant:\n%s", got, want)
	}
	got, _ = os.ReadFile(module)
	if want := strings.Replace(moduleBefore, "old", "part", 1); string(got) != want {
		t.Errorf("second file:\n%s\nwant:\n%s", got, want)
	}
}
