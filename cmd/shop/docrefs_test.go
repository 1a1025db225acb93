package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The code references of docs/architecture.md and the workshop are
// checked against the code, so the map cannot drift from the house. A
// reference is a backticked span outside fenced blocks, of these forms:
//
//   - a Go file path, `api/middleware.go` (it has a slash and ends in
//     .go): the file exists;
//   - an identifier right after a file, `api/session.go`: `withSession`,
//     `store/repo/views.go` (`byRating`), and the identifiers listed right after
//     it (`domain/featured.go`: `FeaturedPerCategory`, `MaxFeatured`), or
//     right before one, `handleCategories` (`api/catalog.go`): declared
//     in that file (a top-level func, type, var or const, a method, a
//     field of a struct declared there, Type.Member), or, lowercase, a
//     name the file spells in a string literal (a JSON field, `ttl`);
//   - Package.Ident and Package.Type.Member, `writes.CreateProduct`,
//     `domain.Product.Apply`, where Package names a package of the module
//     (Package.Ident may be a method of one of its types, as the docs
//     write `writes.CreateProduct` for the method of `writes.Writes`);
//   - Type.Member, `Products.Read`, where Type starts upper case: some
//     type of the module of that name has that method or field (promoted
//     ones included); a lower-case member may be a field's JSON name
//     (`CartLine.name`);
//   - a test name, `TestScreensReadOnce`: a top-level func of some
//     _test.go file.
//
// Everything else (env vars, JSON fields, statuses, commands, HTTP paths,
// file names such as `payments.db`) is prose, not checked.

// goIndex is what the docs may name in the module's Go files.
type goIndex struct {
	files    map[string]*fileDecls      // slash path from the module root
	pkgs     map[string]map[string]bool // package name → top-level names
	members  map[string]map[string]bool // "pkg.Type" → methods, fields, JSON names
	embeds   map[string][]string        // "pkg.Type" → embedded type names, "pkg.Type"
	types    map[string][]string        // "Type" → "pkg.Type" of every package
	tests    map[string]bool            // Test... funcs
	basename map[string]bool            // file base names
	strs     map[string]map[string]bool // file → words of its string literals
	anyStr   map[string]bool            // words of every string literal
}

type fileDecls struct {
	pkg   string
	names map[string]bool // top-level names, methods, fields of its structs, "Type.Member"
}

func indexModule(t *testing.T, root string) *goIndex {
	t.Helper()
	ix := &goIndex{
		files: map[string]*fileDecls{}, pkgs: map[string]map[string]bool{},
		members: map[string]map[string]bool{}, embeds: map[string][]string{},
		types: map[string][]string{}, tests: map[string]bool{}, basename: map[string]bool{},
		strs: map[string]map[string]bool{}, anyStr: map[string]bool{},
	}
	word := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	fset := gotoken.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		// A package's name as the docs write it is its directory's.
		dirPkg := path.Base(path.Dir(rel))
		fd := &fileDecls{pkg: pkg, names: map[string]bool{}}
		ix.files[rel] = fd
		ix.basename[path.Base(rel)] = true
		words := map[string]bool{}
		ix.strs[rel] = words
		ast.Inspect(f, func(n ast.Node) bool {
			if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == gotoken.STRING {
				for _, w := range word.FindAllString(bl.Value, -1) {
					words[w] = true
					ix.anyStr[w] = true
				}
			}
			return true
		})
		top := func(name string) {
			fd.names[name] = true
			for _, pn := range []string{pkg, dirPkg} {
				if ix.pkgs[pn] == nil {
					ix.pkgs[pn] = map[string]bool{}
				}
				ix.pkgs[pn][name] = true
			}
		}
		member := func(typ, name string) {
			fd.names[name] = true
			fd.names[typ+"."+name] = true
			for _, key := range []string{pkg + "." + typ, dirPkg + "." + typ} {
				if ix.members[key] == nil {
					ix.members[key] = map[string]bool{}
				}
				ix.members[key][name] = true
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					top(d.Name.Name)
					if strings.HasSuffix(rel, "_test.go") && strings.HasPrefix(d.Name.Name, "Test") {
						ix.tests[d.Name.Name] = true
					}
					continue
				}
				if recv := recvType(d.Recv.List[0].Type); recv != "" {
					member(recv, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							top(n.Name)
						}
					case *ast.TypeSpec:
						typ := s.Name.Name
						top(typ)
						ix.types[typ] = append(ix.types[typ], pkg+"."+typ)
						if dirPkg != pkg {
							ix.types[typ] = append(ix.types[typ], dirPkg+"."+typ)
						}
						switch tt := s.Type.(type) {
						case *ast.StructType:
							for _, fl := range tt.Fields.List {
								if fl.Tag != nil {
									if tag, err := strconv.Unquote(fl.Tag.Value); err == nil {
										if js, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ","); js != "" && js != "-" {
											member(typ, js)
										}
									}
								}
								if len(fl.Names) == 0 {
									if e := recvType(fl.Type); e != "" {
										member(typ, e)
										for _, key := range []string{pkg + "." + typ, dirPkg + "." + typ} {
											ix.embeds[key] = append(ix.embeds[key], embeddedKey(fl.Type, pkg))
										}
									}
								}
								for _, n := range fl.Names {
									member(typ, n.Name)
								}
							}
						case *ast.InterfaceType:
							for _, m := range tt.Methods.List {
								for _, n := range m.Names {
									member(typ, n.Name)
								}
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// recvType is the type name of a receiver or an embedded field.
func recvType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvType(x.X)
	case *ast.IndexExpr:
		return recvType(x.X)
	case *ast.IndexListExpr:
		return recvType(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func embeddedKey(e ast.Expr, pkg string) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return embeddedKey(x.X, pkg)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
	case *ast.Ident:
		return pkg + "." + x.Name
	}
	return ""
}

// hasMember: "pkg.Type" has the member, itself or through an embedded type.
func (ix *goIndex) hasMember(key, name string, depth int) bool {
	if ix.members[key][name] {
		return true
	}
	if depth > 4 {
		return false
	}
	for _, e := range ix.embeds[key] {
		if ix.hasMember(e, name, depth+1) {
			return true
		}
	}
	return false
}

var (
	identRef  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}(\(\))?$`)
	goFileRef = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+\.go$`)
	// File-like spans that look like Package.ident: `payments.db`, `openapi.yaml`.
	fileExt = regexp.MustCompile(`\.(db|yaml|yml|json|md|sh|txt|csv|html|js|css|go|mod|sum)$`)
)

// docRef is one reference found in a doc.
type docRef struct {
	where string // docs/x.md:line
	ref   string // the span, and its file when it is read in one
	ok    bool
}

// resolveDocRefs finds and resolves the references of one doc.
func resolveDocRefs(ix *goIndex, name, text string) []docRef {
	var refs []docRef
	span := regexp.MustCompile("`([^`\n]+)`")
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		where := fmt.Sprintf("%s:%d", name, i+1)
		locs := span.FindAllStringSubmatchIndex(line, -1)
		spans := make([]string, len(locs))
		for k, l := range locs {
			spans[k] = line[l[2]:l[3]]
		}
		// between(k) is the text between span k-1 and span k.
		between := func(k int) string { return line[locs[k-1][1]:locs[k][0]] }
		inFile := make([]string, len(spans)) // the file a span is read in
		for k, s := range spans {
			if !goFileRef.MatchString(s) {
				continue
			}
			// `file`: `A`, `B` / `C` and `file` (`A`)
			for j, sep := k+1, []string{": ", " ("}; j < len(spans) && identRef.MatchString(spans[j]) && slices.Contains(sep, between(j)); j++ {
				inFile[j] = s
				sep = []string{", ", " / ", ", and ", " and "}
			}
			// `A` (`file`)
			if k > 0 && identRef.MatchString(spans[k-1]) && between(k) == " (" && inFile[k-1] == "" {
				inFile[k-1] = s
			}
		}
		for k, s := range spans {
			switch {
			case goFileRef.MatchString(s):
				_, ok := ix.files[s]
				refs = append(refs, docRef{where, s, ok})
			case inFile[k] != "" && identRef.MatchString(s):
				id := strings.TrimSuffix(s, "()")
				fd := ix.files[inFile[k]]
				ok := fd != nil && fd.names[id]
				if fd != nil && !ok {
					if p, rest, cut := strings.Cut(id, "."); cut {
						// Package.Ident next to its file, or a method the file calls.
						if p == fd.pkg || p == path.Base(path.Dir(inFile[k])) {
							ok = fd.names[rest]
						}
						if !ok {
							ok, _ = ix.resolve(id)
						}
					} else if dataName(id) {
						// A JSON field, a container, an env var: the code spells it.
						ok = ix.strs[inFile[k]][id] || ix.anyStr[id]
					}
				}
				refs = append(refs, docRef{where, fmt.Sprintf("`%s` in `%s`", s, inFile[k]), ok})
			case identRef.MatchString(s) && !fileExt.MatchString(s):
				if ok, checked := ix.resolve(strings.TrimSuffix(s, "()")); checked {
					refs = append(refs, docRef{where, s, ok})
				}
			}
		}
	}
	return refs
}

// dataName: a name the code spells as data rather than declares: lower
// case first (`priceVersion`, `carts`) or all capitals (`SHOP_CACHE`).
func dataName(id string) bool {
	return id[0] >= 'a' && id[0] <= 'z' || id == strings.ToUpper(id)
}

// resolve resolves a span read outside a file; checked is false when the
// span is not of a checked form.
func (ix *goIndex) resolve(s string) (ok, checked bool) {
	parts := strings.Split(s, ".")
	first := parts[0]
	if len(parts) == 1 {
		if strings.HasPrefix(first, "Test") && len(first) > 4 && first[4] >= 'A' && first[4] <= 'Z' {
			if ix.tests[first] {
				return true, true
			}
			for _, names := range ix.pkgs { // a declaration named Test… (payments.TestMethods)
				if names[first] {
					return true, true
				}
			}
			return false, true
		}
		return false, false
	}
	if _, isPkg := ix.pkgs[first]; isPkg && first == strings.ToLower(first) {
		switch len(parts) {
		case 2:
			if ix.pkgs[first][parts[1]] {
				return true, true
			}
			// writes.CreateProduct: a method of a type of the package.
			for key := range ix.members {
				if strings.HasPrefix(key, first+".") && ix.members[key][parts[1]] {
					return true, true
				}
			}
			return false, true
		case 3:
			return ix.hasMember(first+"."+parts[1], parts[2], 0), true
		}
	}
	if first[0] < 'A' || first[0] > 'Z' || len(parts) != 2 {
		return false, false
	}
	for _, key := range ix.types[first] {
		if ix.hasMember(key, parts[1], 0) {
			return true, true
		}
	}
	return false, true
}

// docsWithCodeReferences: docs/architecture.md and every workshop page.
func docsWithCodeReferences(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "workshop", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("workshop pages: %v", err)
	}
	return append([]string{filepath.Join(root, "docs", "architecture.md")}, pages...)
}

// TestArchitectureDocReferencesResolve: every code reference of
// docs/architecture.md and the workshop names a file, a declaration or a
// member the code has (the forms are above).
func TestArchitectureDocReferencesResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	ix := indexModule(t, root)
	resolved, broken := 0, 0
	for _, p := range docsWithCodeReferences(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, r := range resolveDocRefs(ix, filepath.ToSlash(rel), string(b)) {
			if r.ok {
				resolved++
				continue
			}
			broken++
			t.Errorf("%s: %s does not resolve", r.where, r.ref)
		}
	}
	t.Logf("%d references resolved, %d did not", resolved, broken)
	if resolved < 300 {
		t.Errorf("only %d references resolved: the reference forms are no longer found", resolved)
	}
}

// TestDocReferenceForms: what the reference finder takes for a reference,
// and what it leaves as prose.
func TestDocReferenceForms(t *testing.T) {
	ix := &goIndex{
		files: map[string]*fileDecls{
			"api/session.go":      {pkg: "api", names: map[string]bool{"withSession": true}},
			"store/repo/views.go": {pkg: "store", names: map[string]bool{"byRating": true, "Repos": true}},
		},
		pkgs:    map[string]map[string]bool{"writes": {"CreateProduct": true}, "payments": {}},
		members: map[string]map[string]bool{"repo.Products": {"Read": true}},
		types:   map[string][]string{"Products": {"repo.Products"}},
		tests:   map[string]bool{"TestScreensReadOnce": true},
		strs:    map[string]map[string]bool{"store/repo/views.go": {"ttl": true}},
	}
	doc := strings.Join([]string{
		"`api/session.go`: `withSession`, `store/repo/views.go` (`byRating`, `ttl`)",
		"`Products.Read` and `writes.CreateProduct`, `TestScreensReadOnce`",
		"`SHOP_ADDR`, `placed`, `payments.db`, `/v1/cart`, `curl -s`, `productIds`",
		"```sh",
		"`Nope.Gone`",
		"```",
		"`api/gone.go`, `Products.Get`, `writes.Gone`, `store/repo/views.go`: `Gone`, `TestGone`",
	}, "\n")
	var got []string
	for _, r := range resolveDocRefs(ix, "d.md", doc) {
		got = append(got, fmt.Sprintf("%s %s %v", r.where, r.ref, r.ok))
	}
	want := []string{
		"d.md:1 api/session.go true",
		"d.md:1 `withSession` in `api/session.go` true",
		"d.md:1 store/repo/views.go true",
		"d.md:1 `byRating` in `store/repo/views.go` true",
		"d.md:1 `ttl` in `store/repo/views.go` true",
		"d.md:2 Products.Read true",
		"d.md:2 writes.CreateProduct true",
		"d.md:2 TestScreensReadOnce true",
		"d.md:7 api/gone.go false",
		"d.md:7 Products.Get false",
		"d.md:7 writes.Gone false",
		"d.md:7 store/repo/views.go true",
		"d.md:7 `Gone` in `store/repo/views.go` false",
		"d.md:7 `TestGone` in `store/repo/views.go` false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("references:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
