package leaktestproof

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/internal/dev/modproxy/modtest"
)

const leaktestModule = "github.com/memdoctor/memdoctor/leaktest"

// TestLeaktestGraph is what a module whose tests use leaktest gets: leaktest's module, as
// this working tree holds it, published as v0.1.0 into a local module proxy; a new module
// whose test imports leaktest runs `go get` on it with an empty module cache. Its module graph
// must hold leaktest's module and nothing else, and the packages its tests build the
// standard library's, leaktest's and its own.
func TestLeaktestGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on a new module")
	}
	tmp := t.TempDir()
	env, svc := modtest.Publish(t, tmp, "../../../leaktest", leaktestModule)
	modtest.Write(t, filepath.Join(svc, "store.go"), `package service

// Store remembers what it is told.
type Store struct{ seen map[string][]byte }

func (s *Store) Remember(k string, v []byte) { s.seen[k] = v }
`)
	modtest.Write(t, filepath.Join(svc, "store_test.go"), `package service

import (
	"testing"

	"github.com/memdoctor/memdoctor/leaktest"
)

func TestStore(t *testing.T) {
	s := &Store{seen: map[string][]byte{}}
	leaktest.Loop(t, func() { s.Remember("k", make([]byte, 8)) })
}
`)
	modtest.OnlyModule(t, svc, env, leaktestModule, "a module whose tests import only leaktest")
	// Every package the tests build is the standard library's, leaktest's or the module's own.
	deps := modtest.Go(t, svc, env, "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.ImportPath}}|{{if .Module}}{{.Module.Path}}{{end}}{{end}}", ".")
	var leaktestPkgs []string
	for _, line := range strings.Split(deps, "\n") {
		pkg, mod, _ := strings.Cut(line, "|")
		switch {
		case mod == leaktestModule:
			leaktestPkgs = append(leaktestPkgs, pkg)
		case mod == "example.com/service", mod == "" && pkg == "example.com/service.test": // the test's main
		default:
			t.Errorf("package %s of module %q in the tests' build", pkg, mod)
		}
	}
	if !slices.Contains(leaktestPkgs, leaktestModule) || !slices.Contains(leaktestPkgs, leaktestModule+"/trend") {
		t.Errorf("leaktest's packages in the tests' build: %q", leaktestPkgs)
	}
	modtest.Go(t, svc, env, "vet", ".")
	modtest.Go(t, svc, env, "test", "-c", "-o", filepath.Join(tmp, "service.test"), ".")
}
