package report

import (
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
