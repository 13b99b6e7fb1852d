package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/internal/suite"
)

// The live line says the packages done, the leaks so far and each package under way with its
// tests done of all.
func TestTestStatus(t *testing.T) {
	var buf bytes.Buffer
	e := &env{term: newStatusTerm(&buf)}
	st := &testStatus{e: e, running: map[string]suite.Progress{}}
	st.update(suite.Progress{Package: "example.com/m/a", Test: "TestX", Checked: 3, Total: 10, Leaks: 1})
	st.update(suite.Progress{Package: "example.com/m/b", Test: "TestY", Checked: 0, Total: 4})
	if !strings.HasSuffix(buf.String(), "memdoctor test: 0 packages done, 1 leaks so far · example.com/m/a 3/10 · example.com/m/b 0/4") {
		t.Errorf("status line: %q", buf.String())
	}
	st.update(suite.Progress{Package: "example.com/m/a", Checked: 10, Total: 10, Leaks: 2, PackageDone: true})
	if !strings.HasSuffix(buf.String(), "memdoctor test: 1 packages done, 2 leaks so far · example.com/m/b 0/4") {
		t.Errorf("status line after a package: %q", buf.String())
	}
	st.clear()
	if !strings.HasSuffix(buf.String(), clearLine) {
		t.Error("the status line is not cleared")
	}
}

// Each package's result is written as soon as those before it are, in their order.
func TestPackageWriterOrder(t *testing.T) {
	var buf bytes.Buffer
	pw := &packageWriter{w: &buf}
	pkg := func(name string) *suite.PackageResult {
		return &suite.PackageResult{Package: name, Status: suite.StatusNoTests}
	}
	pw.done(1, pkg("b"))
	if buf.Len() != 0 {
		t.Fatalf("the second package was written before the first: %q", buf.String())
	}
	pw.done(0, pkg("a"))
	pw.done(2, pkg("c"))
	if got := buf.String(); got != "?   \ta\t[no test files]\n?   \tb\t[no test files]\n?   \tc\t[no test files]\n" {
		t.Errorf("written %q", got)
	}
	pw.flush(&suite.Result{Packages: []*suite.PackageResult{pkg("a"), pkg("b"), pkg("c"), pkg("d")}})
	if !strings.HasSuffix(buf.String(), "?   \td\t[no test files]\n") || strings.Count(buf.String(), "\ta\t") != 1 {
		t.Errorf("flush: %q", buf.String())
	}
}
