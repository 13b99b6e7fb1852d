package rule

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRulesImportOnlyFacts: every file of the rules imports nothing of memdoctor's but the
// facts and the growth statistics' leaf (leaktest/trend, standard library only, shared with
// the leaktest module), and nothing else but the standard library; none registers itself.
func TestRulesImportOnlyFacts(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no files")
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path != "github.com/memdoctor/memdoctor/facts" && path != "github.com/memdoctor/memdoctor/leaktest/trend" && strings.Contains(strings.Split(path, "/")[0], ".") {
				t.Errorf("%s imports %s: a rule reads only the facts, the trend statistics and the standard library", name, path)
			}
		}
		full, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range full.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s: func init at %s: rules are a literal list", name, fset.Position(fn.Pos()))
			}
		}
	}
}

// TestRulesInKindsOrder: the literal list of rules covers every kind once, in the order of
// Kinds.
func TestRulesInKindsOrder(t *testing.T) {
	if len(rules) != len(Kinds) {
		t.Fatalf("%d rules for %d kinds", len(rules), len(Kinds))
	}
	for i, r := range rules {
		if r.kind != Kinds[i] {
			t.Errorf("rule %d judges %s, want %s", i, r.kind, Kinds[i])
		}
	}
}
