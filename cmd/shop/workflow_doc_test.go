package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
)

// workflowDoc renders the order workflow (domain.States, domain.Moves) as
// docs/architecture.md shows it: the Mermaid state diagram, the states
// with what each asks of stock and money, and the moves.
func workflowDoc() string {
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	b.WriteString("    [*] --> pending: claim the cart, open the order\n")
	for _, m := range domain.Moves {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", m.From, m.To, m.Name)
	}
	for _, s := range domain.States {
		if s.Final {
			fmt.Fprintf(&b, "    %s --> [*]\n", s.Name)
		}
	}
	b.WriteString("```\n\n")
	b.WriteString("| State | Stock | Money | In progress | Counted | Meaning |\n|---|---|---|---|---|---|\n")
	yes := map[bool]string{true: "yes", false: ""}
	for _, s := range domain.States {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", s.Name, s.Stock, s.Money, yes[s.InProgress], yes[s.Counted], s.Doc)
	}
	b.WriteString("\n| Move | From | To | By | Decided by |\n|---|---|---|---|---|\n")
	for _, m := range domain.Moves {
		decides := m.Decides
		if decides == "" {
			decides = "—"
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s |\n", m.Name, m.From, m.To, m.By, decides)
	}
	return b.String()
}

// TestArchitectureShowsTheWorkflow: the workflow in docs/architecture.md
// is the table in domain/workflow.go, diagram and all. On a difference
// the test prints the block to paste.
func TestArchitectureShowsTheWorkflow(t *testing.T) {
	checkWorkflowBlock(t, filepath.Join("..", "..", "docs", "architecture.md"))
}

// TestWorkshopShowsTheWorkflow: the workshop's module on the workflow
// prints the same block, so what it teaches is what the code follows.
func TestWorkshopShowsTheWorkflow(t *testing.T) {
	checkWorkflowBlock(t, filepath.Join("..", "..", "docs", "workshop", "09-cross-partition-workflows.md"))
}

// checkWorkflowBlock fails unless the file at path holds workflowDoc()
// between the workflow's markers.
func checkWorkflowBlock(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- workflow: written from domain/workflow.go, checked by cmd/shop/workflow_doc_test.go -->\n", "<!-- end workflow -->"
	_, rest, ok := bytes.Cut(b, []byte(begin))
	doc, _, ok2 := bytes.Cut(rest, []byte(end))
	if !ok || !ok2 {
		t.Fatalf("%s: the workflow's markers are missing; add:\n%s%s%s", path, begin, workflowDoc(), end)
	}
	if want := workflowDoc(); string(doc) != want {
		t.Errorf("%s: the workflow is not domain/workflow.go's; it should read:\n%s%s%s", path, begin, want, end)
	}
}

// TestEveryStateIsReachedAndLeftByTheTable: the table is one workflow:
// every state but pending is entered by a move, every state in progress
// has a move out that the checkout makes and one the sweeper makes (so no
// order stays in progress), and only final states have no move out.
func TestEveryStateIsReachedAndLeftByTheTable(t *testing.T) {
	for _, s := range domain.States {
		var in, out, byCheckout, bySweeper int
		for _, m := range domain.Moves {
			if _, ok := domain.StateOf(m.From); !ok {
				t.Errorf("move %s from unknown state %q", m.Name, m.From)
			}
			if _, ok := domain.StateOf(m.To); !ok {
				t.Errorf("move %s to unknown state %q", m.Name, m.To)
			}
			if m.To == s.Name {
				in++
			}
			if m.From == s.Name {
				out++
				byCheckout += map[bool]int{true: 1}[m.By == domain.ByCheckout]
				bySweeper += map[bool]int{true: 1}[m.By == domain.BySweeper]
			}
		}
		switch {
		case s.Name != domain.StatusPending && in == 0:
			t.Errorf("state %s: no move enters it", s.Name)
		case s.Final != (out == 0):
			t.Errorf("state %s: final %v, but %d moves leave it", s.Name, s.Final, out)
		case s.InProgress && (byCheckout == 0 || bySweeper == 0):
			t.Errorf("state %s is in progress: it needs a move by the checkout (%d) and one by the sweeper (%d)", s.Name, byCheckout, bySweeper)
		}
	}
}
