package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Package is one package of the suite: its test functions, as go test finds them.
type Package struct {
	ImportPath string
	Dir        string
	Name       string
	// Internal are the tests of the package's own _test.go files, External those of its
	// package NAME_test, in the order go test runs them.
	Internal, External []TestFunc
	// Err is why the package cannot be tested (go list's error), "" when it can.
	Err string
}

// TestFunc is a test function and where it is declared.
type TestFunc struct {
	Name string
	File string // absolute
	Line int
}

// Tests are every test of the package, in go test's order.
func (p *Package) Tests() []TestFunc {
	return append(p.Internal[:len(p.Internal):len(p.Internal)], p.External...)
}

// listed is what go list -json prints of a package that memdoctor reads.
type listed struct {
	ImportPath   string
	Dir          string
	Name         string
	TestGoFiles  []string
	XTestGoFiles []string
	Error        *struct{ Err string }
	DepsErrors   []*struct{ Err string }
}

// listPackages lists the packages the patterns name, as go test would take them (with the
// build flags), and finds each one's test functions.
func listPackages(ctx context.Context, dir string, env, buildFlags, patterns []string) ([]*Package, error) {
	args := append([]string{"list", "-e", "-json=ImportPath,Dir,Name,TestGoFiles,XTestGoFiles,Error,DepsErrors"}, buildFlags...)
	args = append(args, "--")
	out, err := goCmd(ctx, dir, env, append(args, patterns...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []*Package
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -json: %w", err)
		}
		p := &Package{ImportPath: l.ImportPath, Dir: l.Dir, Name: l.Name}
		switch {
		case l.Error != nil:
			p.Err = l.Error.Err
		case len(l.DepsErrors) > 0 && l.DepsErrors[0] != nil:
			p.Err = l.DepsErrors[0].Err
		}
		if p.Err == "" {
			// A file that does not parse fails the build, with go's own message.
			for _, f := range l.TestGoFiles {
				p.Internal = appendTests(p.Internal, filepath.Join(l.Dir, f))
			}
			for _, f := range l.XTestGoFiles {
				p.External = appendTests(p.External, filepath.Join(l.Dir, f))
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// appendTests appends the test functions of a _test.go file, as go test finds them: top-level
// functions named Test followed by anything but a lower-case letter, taking one *T.
func appendTests(tests []TestFunc, file string) []TestFunc {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return tests
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name == "TestMain" || !isTest(fn.Name.Name, "Test") || !isTestFunc(fn, "T") {
			continue
		}
		tests = append(tests, TestFunc{Name: fn.Name.Name, File: file, Line: fset.Position(fn.Pos()).Line})
	}
	return tests
}

// isTest reports whether name looks like a test: prefix, then nothing or anything but a
// lower-case letter (go test's rule).
func isTest(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[len(prefix):])
	return !unicode.IsLower(r)
}

// isTestFunc reports whether fn takes one *T (or *x.T) and returns nothing, and is not
// generic: go test's check.
func isTestFunc(fn *ast.FuncDecl, arg string) bool {
	t := fn.Type
	if t.TypeParams != nil || t.Results != nil && len(t.Results.List) > 0 || t.Params == nil || len(t.Params.List) != 1 || len(t.Params.List[0].Names) > 1 {
		return false
	}
	ptr, ok := t.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	if name, ok := ptr.X.(*ast.Ident); ok && name.Name == arg {
		return true
	}
	sel, ok := ptr.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == arg
}
