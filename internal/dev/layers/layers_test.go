package layers

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/memdoctor/memdoctor"

// layers are the module's packages by layer, lowest first (docs/development.md shows the same
// table). Outside its tests a package imports packages of its own layer or of a lower one; a
// leaf imports none of the module's. "x/..." is x and every package under it.
var layers = []struct {
	name string
	pkgs []string
}{
	{"leaves", []string{"culprit", "units", "infile", "sanitize", "gctrace"}},
	{"session", []string{"session", "holders"}},
	{"readers", []string{"collect/...", "process", "snapshot", "holders/walk"}},
	{"evidence", []string{"evidence", "source/..."}},
	{"facts", []string{"facts"}},
	{"rules", []string{"diagnose/rule"}},
	{"words", []string{"diagnose/words"}},
	{"diagnosis", []string{"diagnose", "compare", "tune"}},
	{"report", []string{"report"}},
	{"top floor", []string{"internal/cli", "internal/recorder", "internal/suite", "internal/webui", "internal/mcpserver", "lab", "cmd/..."}},
	{"tools", []string{"internal/dev/...", "bench/..."}},
}

// otherModules are the repository's nested modules that memdoctor's packages import: their
// own graph tests keep them (TestAgentGraph, TestLeaktestGraph).
var otherModules = []string{"agent", "leaktest"}

// layerOf returns the index of a package's layer (its directory relative to the module's
// root), or -1. An exact name wins over a "x/..." pattern.
func layerOf(dir string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.pkgs {
			if prefix, ok := strings.CutSuffix(p, "/..."); ok {
				if (dir == prefix || strings.HasPrefix(dir, prefix+"/")) && len(prefix) > bestLen {
					best, bestLen = i, len(prefix)
				}
			} else if dir == p {
				return i
			}
		}
	}
	return best
}

// ownPackage returns the directory of an import path of this module, or false for the
// standard library, third parties and the nested modules.
func ownPackage(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return "", false
	}
	for _, m := range otherModules {
		if rel == m || strings.HasPrefix(rel, m+"/") {
			return "", false
		}
	}
	return rel, true
}

type imp struct {
	file string // relative to the module's root
	dir  string // the imported package's directory
}

// packages reads the imports of every Go file of the module, by package directory: those of
// its code and those of its tests.
func packages(t *testing.T, root string) (code, tests map[string][]imp) {
	code, tests = map[string][]imp{}, map[string][]imp{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for _, c := range f.Comments {
			for _, l := range c.List {
				if strings.HasPrefix(l.Text, "//go:build") && strings.Contains(l.Text, "ignore") {
					return nil // not built
				}
			}
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		into := code
		if strings.HasSuffix(rel, "_test.go") {
			into = tests
		}
		if _, ok := into[dir]; !ok {
			into[dir] = nil
		}
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			if to, ok := ownPackage(path); ok {
				into[dir] = append(into[dir], imp{rel, to})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(code) < 30 {
		t.Fatalf("only %d packages under %s: is it the module's root?", len(code), root)
	}
	return code, tests
}

// TestLayers: every package has a layer; outside its tests it imports only its own layer and
// those below (a leaf, nothing of memdoctor's); no test below the top floor imports internal/
// but internal/dev, the tools.
func TestLayers(t *testing.T) {
	code, tests := packages(t, filepath.Join("..", "..", ".."))
	for _, v := range violations(code, tests) {
		t.Error(v)
	}
}

// violations returns what breaks the layers in the imports of the packages' code and tests
// (by package directory), one line each.
func violations(code, tests map[string][]imp) []string {
	var out []string
	dirs := make([]string, 0, len(code))
	for dir := range code {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		l := layerOf(dir)
		if l < 0 {
			out = append(out, dir+" has no layer: give it one in internal/dev/layers/layers_test.go and in docs/development.md's table")
			continue
		}
		for _, i := range code[dir] {
			to := layerOf(i.dir)
			switch {
			case to < 0:
				out = append(out, fmt.Sprintf("%s imports %s, which has no layer", i.file, i.dir))
			case layers[l].name == "leaves":
				out = append(out, fmt.Sprintf("%s imports %s: a leaf imports nothing of memdoctor's", i.file, i.dir))
			case to > l:
				out = append(out, fmt.Sprintf("%s imports %s: %s (%s) imports only its layer and those below, not the %s", i.file, i.dir, dir, layers[l].name, layers[to].name))
			}
		}
	}
	dirs = dirs[:0]
	for dir := range tests {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if strings.HasPrefix(dir, "internal/") || strings.HasPrefix(dir, "cmd/") {
			continue
		}
		for _, i := range tests[dir] {
			if strings.HasPrefix(i.dir, "internal/") && !strings.HasPrefix(i.dir, "internal/dev/") {
				out = append(out, fmt.Sprintf("%s imports %s: below the top floor, a test imports of internal/ only the tools (internal/dev)", i.file, i.dir))
			}
		}
	}
	return out
}

// TestLayersCatch: the checks fail where they should, on imports made up for the purpose, and
// pass the imports the layers allow.
func TestLayersCatch(t *testing.T) {
	for _, c := range []struct {
		from, to string
		test     bool // an import of the package's tests
		bad      string
	}{
		{"session", "gctrace", false, ""},
		{"evidence", "collect/pprofio", false, ""},
		{"diagnose/rule", "facts", false, ""},
		{"cmd/memdoctor", "internal/cli", false, ""},
		{"bench/verdicts", "internal/dev/sim", false, ""},
		{"holders/walk", "holders", false, ""}, // holders/walk is a reader: its exact name wins
		{"diagnose", "internal/dev/proftest", true, ""},
		{"holders/walk", "lab", true, ""},
		{"report", "internal/cli", false, "not the top floor"},
		{"evidence", "facts", false, "not the facts"},
		{"holders", "holders/walk", false, "not the readers"},
		{"culprit", "units", false, "a leaf imports nothing"},
		{"collect/memread", "internal/dev/gotool", false, "not the tools"},
		{"internal/cli", "internal/dev/sim", false, "not the tools"},
		{"evidence", "newpackage", false, "which has no layer"},
		{"report", "internal/webui", true, "a test imports of internal/ only the tools"},
	} {
		code := map[string][]imp{c.from: nil, c.to: nil}
		tests := map[string][]imp{}
		into := code
		if c.test {
			into = tests
		}
		into[c.from] = []imp{{c.from + "/x.go", c.to}}
		got := violations(code, tests)
		var hit []string
		for _, v := range got {
			if !strings.Contains(v, "newpackage has no layer") {
				hit = append(hit, v)
			}
		}
		switch {
		case c.bad == "" && len(hit) > 0:
			t.Errorf("%s -> %s: %q, want no violation", c.from, c.to, hit)
		case c.bad != "" && (len(hit) != 1 || !strings.Contains(hit[0], c.bad)):
			t.Errorf("%s -> %s: %q, want one violation saying %q", c.from, c.to, hit, c.bad)
		}
	}
	if got := violations(map[string][]imp{"newpackage": nil}, nil); len(got) != 1 || !strings.Contains(got[0], "has no layer") {
		t.Errorf("a package nobody placed: %q", got)
	}
}
