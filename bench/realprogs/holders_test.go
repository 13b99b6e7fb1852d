package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// holdersJSONOf writes a holders result with one culprit, site, whose paths are given as
// expr=bytes, and garbage bytes beside them.
func holdersJSONOf(t *testing.T, site string, garbage float64, paths ...string) []byte {
	t.Helper()
	type path struct {
		Expr  string  `json:"expr"`
		Bytes float64 `json:"bytes"`
	}
	var ps []path
	total := garbage
	for _, p := range paths {
		expr, b, _ := strings.Cut(p, "=")
		var n float64
		if err := json.Unmarshal([]byte(b), &n); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, path{expr, n})
		total += n
	}
	samples := 0
	if total > 0 {
		samples = 10
	}
	b, err := json.Marshal(map[string]any{
		"schema": "memdoctor/holders/v1", "stopped_ms": 12.5,
		"culprits": []any{map[string]any{"site": site, "samples": samples, "bytes": total, "garbage_bytes": garbage, "paths": ps}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJudgeHolders(t *testing.T) {
	want := holdersWant{site: "example.com/p.keyOf", path: []string{".index[key]"}, share: 0.8}
	for _, c := range []struct {
		name    string
		site    string
		garbage float64
		paths   []string
		right   bool
		share   float64
		err     string
	}{
		{"all held by the truth", want.site, 50, []string{"p.srv.index[key]=900", "p.main.s.index[key]=100"}, true, 1, ""},
		{"garbage does not count", want.site, 5000, []string{"p.srv.index[key]=1000"}, true, 1, ""},
		{"the wrong holder first", want.site, 0, []string{"p.srv.cache[value]=700", "p.srv.index[key]=300"}, false, 0.3, ""},
		{"below the share", want.site, 0, []string{"p.srv.index[key]=790", "p.srv.other=210"}, false, 0.79, ""},
		{"no path covers the rest", want.site, 0, []string{"p.srv.index[key]=500"}, true, 1, ""},
		{"nothing reachable", want.site, 800, nil, false, 0, "none of the site's 10 sampled objects is reachable"},
		{"no sample", want.site, 0, nil, false, 0, "no sampled object of the site in the process"},
		{"another site", "example.com/p.other", 0, []string{"p.srv.index[key]=500"}, false, 0, "the result has no culprit example.com/p.keyOf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), holdersJSON)
			if err := os.WriteFile(path, holdersJSONOf(t, c.site, c.garbage, c.paths...), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := readHolders(path)
			if err != nil {
				t.Fatal(err)
			}
			var v holdersVerdict
			judgeHolders(&v, res, want)
			if v.Right != c.right || v.Error != c.err || (c.err == "" && abs(v.Share-c.share) > 1e-9) {
				t.Errorf("verdict %+v; want right %v, share %.2f, error %q", v, c.right, c.share, c.err)
			}
			if c.err == "" && v.StoppedMs != 12.5 {
				t.Errorf("stopped %.1f ms; want the result's 12.5", v.StoppedMs)
			}
		})
	}
	// The truth shows beside a wrong verdict.
	v := holdersVerdict{Site: want.site, Want: want.path, Top: "p.srv.cache[value]", Share: 0.3}
	want.truth = "index holds them"
	if line := v.line(want); !strings.HasPrefix(line, "wrong: p.keyOf held by p.srv.cache[value]; 30%") || !strings.HasSuffix(line, "truth: index holds them") {
		t.Errorf("line %q", line)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestReadHoldersRejects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.json")
	os.WriteFile(path, []byte(`{"schema":"memdoctor/diagnosis/v1"}`), 0o644)
	if _, err := readHolders(path); err == nil || !strings.Contains(err.Error(), "not a memdoctor holders result") {
		t.Errorf("a diagnosis read as holders: %v", err)
	}
}

// fakeHolders is the holders part of a stand-in memdoctor: it records its arguments in
// $FAKE_HOLDERS_ARGS and writes $FAKE_HOLDERS_RESULT to its --json file.
const fakeHolders = `if [ "$1" = holders ]; then
	echo "$@" > "$FAKE_HOLDERS_ARGS"
	shift
	while [ $# -gt 1 ]; do
		case "$1" in
		--json) json=$2; shift 2;;
		*) shift 2;;
		esac
	done
	[ -n "$1" ] || exit 7
	echo "$FAKE_HOLDERS_RESULT" > "$json"
	echo "Holders in process $1"
	exit 0
fi
`

// TestRunHolders checks what the runner asks memdoctor holders: the diagnosis' culprits with
// --from, and the expected site with --site unless the diagnosis names it already (holders
// would count it twice).
func TestRunHolders(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "memdoctor")
	if err := os.WriteFile(md, []byte("#!/bin/sh\n"+fakeHolders+"exit 9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := filepath.Join(dir, "args")
	t.Setenv("FAKE_HOLDERS_ARGS", args)
	want := holdersWant{site: "example.com/p.keyOf", path: []string{".index[key]"}}
	t.Setenv("FAKE_HOLDERS_RESULT", string(holdersJSONOf(t, want.site, 0, "p.srv.index[key]=100")))
	for _, c := range []struct {
		name       string
		d          *diagnosis
		from, site bool
	}{
		{"the diagnosis names the site", diag(t, "heap-leak/warning:example.com/p.grow,example.com/p.keyOf"), true, false},
		{"the diagnosis names others", diag(t, "heap-leak/warning:example.com/p.grow"), true, true},
		{"no heap leak", diag(t, "goroutine-leak/warning:example.com/p.wait"), false, true},
		{"no diagnosis", nil, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			caseDir := t.TempDir()
			v := runHolders(context.Background(), md, caseDir, 4242, c.d, want)
			b, err := os.ReadFile(args)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Fields(string(b))
			if got[0] != "holders" || got[len(got)-1] != "4242" || !strings.Contains(string(b), "--json "+filepath.Join(caseDir, holdersJSON)) {
				t.Errorf("memdoctor %s", b)
			}
			if hasFrom := strings.Contains(string(b), "--from "+filepath.Join(caseDir, "session")); hasFrom != c.from || (v.From != "") != c.from {
				t.Errorf("memdoctor %s (verdict from %q); want --from %v", b, v.From, c.from)
			}
			if hasSite := strings.Contains(string(b), "--site "+want.site); hasSite != c.site {
				t.Errorf("memdoctor %s; want --site %v", b, c.site)
			}
			if !v.Right || v.Top != "p.srv.index[key]" || v.Error != "" {
				t.Errorf("verdict %+v; want right", v)
			}
			out, _ := os.ReadFile(filepath.Join(caseDir, holdersText))
			if !strings.HasPrefix(string(out), "$ memdoctor holders ") || !strings.Contains(string(out), "Holders in process 4242") {
				t.Errorf("%s: %q", holdersText, out)
			}
		})
	}
	// memdoctor fails: the verdict says so and where to look.
	os.WriteFile(md, []byte("#!/bin/sh\necho 'memdoctor: holders: attach: operation not permitted' >&2\nexit 1\n"), 0o755)
	v := runHolders(context.Background(), md, t.TempDir(), 4242, nil, want)
	if v.Right || !strings.Contains(v.Error, "exit status 1") || !strings.Contains(v.Error, holdersText) {
		t.Errorf("verdict %+v; want the failure", v)
	}
}

// TestRunCaseHolders runs a whole case with -holders: holders runs on the live program before
// it is stopped, and its verdict lands in the result and the table.
func TestRunCaseHolders(t *testing.T) {
	c, b, _, state := fakeCase(t)
	dir := t.TempDir()
	md := filepath.Join(dir, "memdoctor")
	if err := os.WriteFile(md, []byte(strings.Replace(fakeWatch, "#!/bin/sh\n", "#!/bin/sh\n"+fakeHolders, 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	args := filepath.Join(dir, "args")
	t.Setenv("FAKE_HOLDERS_ARGS", args)
	want := holdersWant{site: "main.leak", path: []string{"main.leak.never"}}
	t.Setenv("FAKE_HOLDERS_RESULT", string(holdersJSONOf(t, want.site, 0, "main.leak.never=64")))
	c.prog.holders = map[string]holdersWant{c.ver.version: want}
	o := options{sessions: t.TempDir(), duration: time.Second, repeat: 1, holders: true}
	r := runCase(context.Background(), o, b, md, c, 0)
	if r.Skipped != "" || r.WatchError != "" {
		t.Fatalf("case did not run: %+v", r)
	}
	if r.Holders == nil || !r.Holders.Right || r.Holders.Top != "main.leak.never" {
		t.Fatalf("holders verdict %+v; want right", r.Holders)
	}
	pid, _ := state()
	if a, _ := os.ReadFile(args); !strings.HasSuffix(strings.TrimSpace(string(a)), " "+strconv.Itoa(pid)) {
		t.Errorf("holders ran on %q; want the program's pid %d", a, pid)
	}
	var out bytes.Buffer
	printTable(&out, []result{r})
	if !strings.Contains(out.String(), "fakeprog@v1: right: main.leak held by main.leak.never; 100%") || !strings.Contains(out.String(), "1 of 1 holders right") {
		t.Errorf("table:\n%s", out.String())
	}
	// Without -holders, holders does not run; with -keep, the program waits for Enter.
	os.Remove(args)
	var said bytes.Buffer
	o.holders, o.keep, o.stdin, o.stderr = false, true, strings.NewReader("\n"), &said
	if r := runCase(context.Background(), o, b, md, c, 0); r.Holders != nil || !r.Right {
		t.Errorf("result %+v without -holders; want right, no holders verdict", r)
	}
	if _, err := os.Stat(args); err == nil {
		t.Error("memdoctor holders ran without -holders")
	}
	pid, _ = state()
	if !strings.Contains(said.String(), "fakeprog@v1 runs as pid "+strconv.Itoa(pid)+" ") || !strings.Contains(said.String(), "press Enter") {
		t.Errorf("-keep said %q", said.String())
	}
	if alive(pid) {
		t.Errorf("fakeprog (pid %d) still runs after Enter", pid)
	}
}

// TestRejudgeHolders judges a kept holders result against today's expectation of the
// catalogue (nats-server v2.8.4's leaked keys, held by the account's lqws map).
func TestRejudgeHolders(t *testing.T) {
	want, ok := holdersExpectation("nats-queue-unsub", "v2.8.4")
	if !ok {
		t.Fatal("the catalogue has no holders expectation for nats-queue-unsub@v2.8.4")
	}
	dir := t.TempDir()
	r := result{Program: "nats-queue-unsub", Version: "v2.8.4", Holders: &holdersVerdict{Error: "stale"}}
	if rejudgeHolders(&r, dir); r.Holders.Right || !strings.Contains(r.Holders.Error, "stale") {
		t.Errorf("verdict %+v with no result kept; want the old error, wrong", r.Holders)
	}
	res := holdersJSONOf(t, want.site, 0, "server.(*Server).acceptConnections.s.gacc.lqws[key]=1000")
	if err := os.WriteFile(filepath.Join(dir, holdersJSON), res, 0o644); err != nil {
		t.Fatal(err)
	}
	if rejudgeHolders(&r, dir); r.Holders.Right {
		t.Errorf("verdict %+v without what to cut; want wrong", r.Holders)
	}
	res = withCuts(t, res, cutOf{"server.Account.lqws", 1, 1 << 20})
	os.WriteFile(filepath.Join(dir, holdersJSON), res, 0o644)
	if rejudgeHolders(&r, dir); !r.Holders.Right || r.Holders.Error != "" || r.Holders.CutFrees != 1<<20 {
		t.Errorf("verdict %+v; want right", r.Holders)
	}
	res = withCuts(t, holdersJSONOf(t, want.site, 0, "server.(*Server).acceptConnections.s.gacc.lqws[key]=1000"), cutOf{"server.Server.gacc", 1, 1 << 20})
	os.WriteFile(filepath.Join(dir, holdersJSON), res, 0o644)
	if rejudgeHolders(&r, dir); r.Holders.Right {
		t.Errorf("verdict %+v; cutting the account frees the keys but is no fix: want wrong", r.Holders)
	}
	res = holdersJSONOf(t, want.site, 0, "server.(*Server).acceptConnections.s.gacc.rm[key]=1000")
	os.WriteFile(filepath.Join(dir, holdersJSON), res, 0o644)
	if rejudgeHolders(&r, dir); r.Holders.Right {
		t.Errorf("verdict %+v; the keys are not in rm: want wrong", r.Holders)
	}
}

type cutOf struct {
	field string
	share float64
	frees uint64
}

// withCuts adds what to cut to the one culprit of a holders result.
func withCuts(t *testing.T, b []byte, cuts ...cutOf) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var cs []any
	for _, c := range cuts {
		cs = append(cs, map[string]any{"field": c.field, "share": c.share, "frees": c.frees})
	}
	m["culprits"].([]any)[0].(map[string]any)["cuts"] = cs
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
