package reach

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// labFile is a file of the lab's scenarios, in this repository.
func labFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../lab", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFindTheConstructorsLine: in the lab's handlers that make a library's goroutines per
// request, the call found is the constructor's (sql.Open, rpc.DialHTTP), not the query or the
// call made with what it returned, from the goroutines' start function alone; the goroutines'
// creator, when known, finds the same line; a start function nothing reaches finds nothing;
// goroutines reached only through an interface (net/http's persistConn, under a Client's Get)
// are not found: the caller keeps what the profiles say.
func TestFindTheConstructorsLine(t *testing.T) {
	if testing.Short() {
		t.Skip("lists and type-checks packages with the go command: seconds")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		q    Query
		line int64
		call string
	}{
		{"sql.Open", Query{Function: "github.com/memdoctor/memdoctor/lab.(*ledger).lookup", File: labFile(t, "sql_open_leak.go"),
			Starts: []string{"database/sql.(*DB).connectionOpener"}}, ledgerOpenLine, "database/sql.Open"},
		{"sql.Open by creator", Query{Function: "github.com/memdoctor/memdoctor/lab.(*ledger).lookup", File: labFile(t, "sql_open_leak.go"),
			Creators: []string{"database/sql.OpenDB"}}, ledgerOpenLine, "database/sql.Open"},
		{"rpc.DialHTTP", Query{Function: "github.com/memdoctor/memdoctor/lab.(*checkout).reserve", File: labFile(t, "rpc_dial_leak.go"),
			Starts: []string{"net/rpc.(*Client).input"}}, 101, "net/rpc.DialHTTP"},
		{"nothing reaches it", Query{Function: "github.com/memdoctor/memdoctor/lab.(*ledger).lookup", File: labFile(t, "sql_open_leak.go"),
			Starts: []string{"net/rpc.(*Client).input"}}, 0, ""},
		{"through an interface", Query{Function: "github.com/memdoctor/memdoctor/lab.(*stockClient).checkStock", File: labFile(t, "http_body_leak.go"),
			Starts: []string{"net/http.(*persistConn).readLoop"}}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			a, ok, err := Find(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v in %s: %+v", ok, time.Since(start).Round(time.Millisecond), a)
			if tc.line == 0 {
				if ok {
					t.Errorf("found %+v, want nothing", a)
				}
				return
			}
			if !ok || a.Line != tc.line || a.Callee != tc.call {
				t.Errorf("found %v: line %d calling %s, want line %d calling %s", ok, a.Line, a.Callee, tc.line, tc.call)
			}
		})
	}
}

// TestNoSource: a file that is not on disk, or has no go.mod above it, is no source at hand.
func TestNoSource(t *testing.T) {
	dir := t.TempDir()
	lone := filepath.Join(dir, "main.go")
	if err := os.WriteFile(lone, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"/nonexistent/src/main.go", "relative/main.go", lone} {
		_, ok, err := Find(context.Background(), Query{Function: "main.main", File: file, Starts: []string{"main.worker"}})
		if ok || !errors.Is(err, ErrNoSource) {
			t.Errorf("%s: found %v, err %v; want ErrNoSource", file, ok, err)
		}
	}
}

// TestPlain: generic type arguments are dropped from a profile's names.
func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"pkg.F":                               "pkg.F",
		"pkg.F[...]":                          "pkg.F",
		"pkg.(*T[go.shape.int]).M":            "pkg.(*T).M",
		"pkg.(*T[map[string]int,go.shape]).M": "pkg.(*T).M",
		"pkg.F[":                              "pkg.F",
	} {
		if got := plain(in); got != want {
			t.Errorf("plain(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStaleSource: a file whose function has no call where the binary's profiles saw one was
// edited since the build: it is not read.
func TestStaleSource(t *testing.T) {
	if testing.Short() {
		t.Skip("lists and type-checks packages with the go command: seconds")
	}
	q := Query{Function: "github.com/memdoctor/memdoctor/lab.(*ledger).lookup", File: labFile(t, "sql_open_leak.go"),
		Starts: []string{"database/sql.(*DB).connectionOpener"}, Lines: []int64{ledgerOpenLine, ledgerOpenLine + 1}}
	if _, ok, err := Find(context.Background(), q); ok || !errors.Is(err, ErrNoSource) {
		t.Errorf("found %v, err %v; want ErrNoSource (line %d holds no call)", ok, err, ledgerOpenLine+1)
	}
	q.Lines = []int64{ledgerOpenLine, ledgerQueryLine}
	if a, ok, err := Find(context.Background(), q); !ok || err != nil || a.Line != ledgerOpenLine {
		t.Errorf("found %v at %d, err %v; want line %d", ok, a.Line, err, ledgerOpenLine)
	}
}

// The lines of the lab's lookup (TestExpectedLines checks the first).
const (
	ledgerOpenLine  = 85
	ledgerQueryLine = 93
)
