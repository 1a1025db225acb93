package api_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reference-shop/shop/api"
)

// TestEveryProblemTypeHasAClientConstant: a Go caller compares an error's
// Type with client.ProblemXxx, so every problem type the shop can answer
// has its constant in api/client/errors.go, and no constant names a type
// the shop never answers. A new error code without its constant fails here.
func TestEveryProblemTypeHasAClientConstant(t *testing.T) {
	f, err := parser.ParseFile(gotoken.NewFileSet(), "client/errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var constants []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != gotoken.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, name := range v.Names {
				if !strings.HasPrefix(name.Name, "Problem") || i >= len(v.Values) {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != gotoken.STRING {
					t.Errorf("client.%s is not a string literal", name.Name)
					continue
				}
				s, _ := strconv.Unquote(lit.Value)
				constants = append(constants, s)
			}
		}
	}
	answered := api.ProblemTypes()
	for _, typ := range answered {
		if !slices.Contains(constants, typ) {
			t.Errorf("the shop answers problems of type %s, and api/client has no Problem constant for it", typ)
		}
	}
	for _, c := range constants {
		if !slices.Contains(answered, c) {
			t.Errorf("api/client's constant %s names a type the shop never answers", c)
		}
	}
}
