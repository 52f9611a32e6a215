package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxLines is how long a function may be (its body, braces included)
// without a `long:` line in its doc comment saying why it is longer.
const maxLines = 80

// sourceFiles are the module's Go files that ship: not tests, not test
// programs (testdata, a package whose name ends in "test", bench/), not
// generated tables, not the CI's own tree.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" ||
				strings.HasSuffix(name, "test") || path == "../bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		out = append(out, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// generated reports whether a file says it is generated (the Go convention).
func generated(f *ast.File) bool {
	for _, c := range f.Comments {
		if c.Pos() > f.Package {
			break
		}
		if strings.HasPrefix(c.Text(), "Code generated ") {
			return true
		}
	}
	return false
}

// TestNoFunctionLongerThanAScreen: every function of the shipped code is
// at most maxLines long, or says why on a doc comment line starting
// `long:`.
func TestNoFunctionLongerThanAScreen(t *testing.T) {
	fset := token.NewFileSet()
	var long []string
	for _, path := range sourceFiles(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if generated(f) {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.Body.End()).Line - fset.Position(fn.Body.Pos()).Line + 1
			if n <= maxLines || saysWhyLong(fn.Doc) {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				name = recvName(fn.Recv.List[0].Type) + "." + name
			}
			long = append(long, fmt.Sprintf("%s:%d %s: %d lines", strings.TrimPrefix(path, "../"), fset.Position(fn.Pos()).Line, name, n))
		}
	}
	slices.Sort(long)
	for _, l := range long {
		t.Error(l)
	}
	if len(long) > 0 {
		t.Logf("%d functions over %d lines: split them, or say why on a doc line starting `long:`", len(long), maxLines)
	}
}

func saysWhyLong(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, l := range strings.Split(doc.Text(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "long:") {
			return true
		}
	}
	return false
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
