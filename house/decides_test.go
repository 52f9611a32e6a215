package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// consentRecords are the types of app whose values are consent: what a
// server may see (a root, a decision, a folder it needs, an allow once, a
// refusal). app builds them (Answer, Answers, Share, AllowAsked, NewRoot…);
// the window asks it to.
var consentRecords = map[string]bool{"Decision": true, "Root": true, "Need": true, "Once": true, "Refusal": true}

// TestWindowBuildsNoConsent: no file of gui/ that ships builds one of
// consentRecords itself — a composite literal (also an element of a
// slice or map literal), a variable of that type, new(T) — since consent
// lives in app and the window only asks it to decide.
func TestWindowBuildsNoConsent(t *testing.T) {
	fset := token.NewFileSet()
	var built []string
	err := filepath.WalkDir("../gui", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.Contains(path, "/testdata/") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, pos := range consentBuilt(f) {
			built = append(built, fmt.Sprintf("%s: builds app.%s", fset.Position(pos.at), pos.what))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		t.Errorf("%s: the window asks app to decide (app.Answer, State.Share, NewRoot…)", strings.TrimPrefix(b, "../"))
	}
}

// A place where f builds a consent record, and which.
type builtAt struct {
	at   token.Pos
	what string
}

// consentBuilt finds where f builds a consent record of app.
func consentBuilt(f *ast.File) []builtAt {
	pkg := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "rootkeeper/app" {
			pkg = "app"
			if imp.Name != nil {
				pkg = imp.Name.Name
			}
		}
	}
	if pkg == "" {
		return nil
	}
	record := func(e ast.Expr) string {
		if sel, ok := e.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg && consentRecords[sel.Sel.Name] {
				return sel.Sel.Name
			}
		}
		return ""
	}
	var out []builtAt
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if what := record(n.Type); what != "" {
				out = append(out, builtAt{n.Pos(), what})
			}
			if what := record(elemType(n.Type)); what != "" {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						e = kv.Value
					}
					if lit, ok := e.(*ast.CompositeLit); ok && lit.Type == nil {
						out = append(out, builtAt{lit.Pos(), what})
					}
				}
			}
		case *ast.ValueSpec:
			if what := record(n.Type); what != "" {
				out = append(out, builtAt{n.Pos(), what})
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if what := record(n.Args[0]); what != "" {
					out = append(out, builtAt{n.Pos(), what})
				}
			}
		}
		return true
	})
	return out
}

// elemType is the element type of a slice, array or map type (nil for
// any other).
func elemType(e ast.Expr) ast.Expr {
	switch t := e.(type) {
	case *ast.ArrayType:
		return t.Elt
	case *ast.MapType:
		return t.Value
	}
	return nil
}
