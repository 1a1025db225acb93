package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The code and the docs name the Cosmos DB best-practice rule they apply
// by its ID, in parentheses or a code span: "(query-point-reads)",
// "(model-denormalize-reads: pre-computed aggregates)", `index-composite`.
// The IDs are those of a public list, one file per rule; the section
// "Rule names" of docs/architecture.md has a row per ID the shop cites:
// the ID, a link to its file in that list, where the workshop teaches it,
// and what it says. So that a reader can look up every ID, each one cited
// must be a row, and each row must be cited.

// ruleListURL is where the list's files are, one per ID: <id>.md.
const ruleListURL = "https://github.com/AzureCosmosDB/cosmosdb-agent-kit/blob/main/skills/cosmosdb-best-practices/rules/"

// ruleCategories are the list's categories: an ID is one of them, then
// words, each after a hyphen.
var (
	ruleCategories = []string{"fts", "global", "index", "model", "monitoring", "partition", "pattern", "query", "sdk", "security", "throughput", "tooling", "vector"}
	ruleIDRest     = regexp.MustCompile(`^(?:-[a-z0-9]+)+`)
)

// citedRuleIDs returns the rule IDs text cites, each with its line: an
// ID-shaped word right after "(" or "`", or right before ")". A word that
// is part of a path, a link, a file name or a longer word is not an ID
// ("partition-key header", "model-partition-example's", "rules/x-y.md").
func citedRuleIDs(text string) (ids []string, lines []int) {
	var at [][2]int
	for _, c := range ruleCategories {
		for i := 0; ; {
			j := strings.Index(text[i:], c+"-")
			if j < 0 {
				break
			}
			start := i + j
			i = start + len(c)
			if m := ruleIDRest.FindStringIndex(text[i:]); m != nil {
				at = append(at, [2]int{start, i + m[1]})
			}
		}
	}
	slices.SortFunc(at, func(a, b [2]int) int { return a[0] - b[0] })
	for _, m := range at {
		var before, after byte = ' ', ' '
		if m[0] > 0 {
			before = text[m[0]-1]
		}
		if m[1] < len(text) {
			after = text[m[1]]
		}
		if isWordByte(before) || strings.IndexByte("/#.-_", before) >= 0 || isWordByte(after) || strings.IndexByte("/.-_", after) >= 0 {
			continue
		}
		if before == '(' || before == '`' || after == ')' {
			ids = append(ids, text[m[0]:m[1]])
			lines = append(lines, 1+strings.Count(text[:m[0]], "\n"))
		}
	}
	return ids, lines
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// ruleRow is a row of "Rule names".
type ruleRow struct {
	id, link string
	taughtIn []string // link targets: docs/workshop/NN-....md, docs/cosmos.md#...
	says     string
	line     int
}

// ruleNamesSection is the section of docs/architecture.md, its rows and
// the line each starts on.
func ruleNamesSection(t *testing.T, arch string) (rows []ruleRow, start, end int) {
	t.Helper()
	lines := strings.Split(arch, "\n")
	start = slices.Index(lines, "## Rule names")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no section "## Rule names"`)
	}
	end = len(lines)
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") {
			end = i
			break
		}
	}
	cell := regexp.MustCompile(`^` + "`" + `([a-z0-9-]+)` + "`" + `$`)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for i := start + 1; i < end; i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) != 4 {
			t.Errorf("docs/architecture.md:%d: a rule row has 4 cells (rule, its file, taught in, what it says): %s", i+1, l)
			continue
		}
		m := cell.FindStringSubmatch(strings.TrimSpace(cells[0]))
		if m == nil {
			t.Errorf("docs/architecture.md:%d: the first cell is the rule ID in a code span: %s", i+1, cells[0])
			continue
		}
		r := ruleRow{id: m[1], says: strings.TrimSpace(cells[3]), line: i + 1}
		if lm := link.FindStringSubmatch(cells[1]); lm != nil {
			r.link = lm[1]
		}
		for _, lm := range link.FindAllStringSubmatch(cells[2], -1) {
			r.taughtIn = append(r.taughtIn, lm[1])
		}
		rows = append(rows, r)
	}
	return rows, start + 1, end
}

// TestRuleNamesAreListed: every rule ID a .go, .md or .js file of the
// repository cites is a row of "Rule names" in docs/architecture.md, each
// row links the ID's file in the public list and the docs that teach it,
// and says what the rule says; no row is left that nothing cites.
func TestRuleNamesAreListed(t *testing.T) {
	root := filepath.Join("..", "..")
	archPath := filepath.Join(root, "docs", "architecture.md")
	b, err := os.ReadFile(archPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, start, end := ruleNamesSection(t, string(b))
	listed := map[string]bool{}
	for _, r := range rows {
		where := "docs/architecture.md:" + strconv.Itoa(r.line)
		if listed[r.id] {
			t.Errorf("%s: %s is listed twice", where, r.id)
		}
		listed[r.id] = true
		if want := ruleListURL + r.id + ".md"; r.link != want {
			t.Errorf("%s: %s links %q, want %q", where, r.id, r.link, want)
		}
		if r.says == "" {
			t.Errorf("%s: %s says nothing of what the rule says", where, r.id)
		}
		for _, target := range r.taughtIn {
			if msg := docLinkBroken(root, "docs", target); msg != "" {
				t.Errorf("%s: %s: %s", where, r.id, msg)
			}
		}
	}
	if len(rows) < 10 {
		t.Errorf("only %d rows in Rule names: the table is no longer found", len(rows))
	}

	cited := map[string]int{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".js":
		default:
			return nil
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		ids, lines := citedRuleIDs(string(text))
		for i, id := range ids {
			if rel == "docs/architecture.md" && lines[i] > start && lines[i] <= end {
				continue // the table itself
			}
			cited[id]++
			if !listed[id] {
				t.Errorf("%s:%d: rule %s is not a row of \"Rule names\" in docs/architecture.md: name a rule of the list (%s), or say it in words", rel, lines[i], id, ruleListURL)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if cited[r.id] == 0 {
			t.Errorf("docs/architecture.md:%d: %s is listed but nothing cites it", r.line, r.id)
		}
	}
	total := 0
	for _, n := range cited {
		total += n
	}
	t.Logf("%d citations of %d rules", total, len(cited))
	if total < 50 {
		t.Errorf("only %d rule citations found: the citation forms are no longer found", total)
	}
}

// docLinkBroken says what is wrong with a relative link of a page in dir
// (a file, maybe with a #heading), or "" when it resolves.
func docLinkBroken(root, dir, target string) string {
	file, anchor, _ := strings.Cut(target, "#")
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path.Join(dir, file))))
	if err != nil {
		return "link " + target + ": no such file"
	}
	if anchor == "" {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") && headingSlug(h) == anchor {
			return ""
		}
	}
	return "link " + target + ": no such heading"
}

// headingSlug is GitHub's anchor of a heading: lower case, spaces to
// hyphens, punctuation but hyphens dropped.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestRuleCitationForms: what the finder takes for a rule citation, and
// what it leaves as prose.
func TestRuleCitationForms(t *testing.T) {
	text := strings.Join([]string{
		"// Point read, not a query: 1 RU (query-point-reads).",
		"// copies (model-denormalize-reads: pre-computed aggregates), `index-composite`",
		"// one point read per line (1 RU,",
		"// sdk-etag-concurrency), at once",
		"the partition-key header, model-partition-example's figures, an index-served query",
		"[rule](https://example.com/rules/query-avoid-cross-partition.md) (#partition-synthetic-keys)",
		"(docs/model-embed-related) (query-point-reads.md) (Xmodel-embed-related)",
	}, "\n")
	ids, lines := citedRuleIDs(text)
	var got []string
	for i, id := range ids {
		got = append(got, strconv.Itoa(lines[i])+" "+id)
	}
	want := []string{"1 query-point-reads", "2 model-denormalize-reads", "2 index-composite", "4 sdk-etag-concurrency"}
	if !slices.Equal(got, want) {
		t.Errorf("citations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := headingSlug("2. A real account, keyless"), "2-a-real-account-keyless"; got != want {
		t.Errorf("headingSlug = %q, want %q", got, want)
	}
}
