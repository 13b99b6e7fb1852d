package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// diag builds a diagnosis from findings written as "kind/severity:culprit1,culprit2".
func diag(t *testing.T, findings ...string) *diagnosis {
	t.Helper()
	type culprit struct {
		Function string `json:"function"`
	}
	type f struct {
		Kind     string    `json:"kind"`
		Severity string    `json:"severity"`
		Culprits []culprit `json:"culprits"`
	}
	fs := []f{}
	for _, s := range findings {
		head, culprits, _ := strings.Cut(s, ":")
		k, sev, _ := strings.Cut(head, "/")
		x := f{Kind: k, Severity: sev}
		if culprits != "" {
			for _, c := range strings.Split(culprits, ",") {
				x.Culprits = append(x.Culprits, culprit{c})
			}
		}
		fs = append(fs, x)
	}
	b, err := json.Marshal(map[string]any{"schema": "memdoctor/diagnosis/v1", "findings": fs, "summary": map[string]any{"goroutines_peak": 1815}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "d.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := readDiagnosis(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestJudge(t *testing.T) {
	leak := version{version: "v1", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"plugin/file.(*Zone).Transfer"}}
	fixed := version{version: "v2", role: after, expect: nil, culprits: nil}
	noCulprit := version{version: "v1", role: before, expect: kinds{"transient-spike"}, culprits: nil}
	either := version{version: "v1", role: before, expect: kinds{"transient-spike", "allocation-hotspot"}, culprits: []string{"bufferedBody"}}
	const site = "github.com/coredns/coredns/plugin/file.(*Zone).Transfer.func1.1"
	tests := []struct {
		name               string
		v                  version
		findings           []string
		verdict, right     bool
		rank               int
		wantFoundForReport string
	}{
		{"leak found, culprit first", leak, []string{"goroutine-leak/warning:" + site}, true, true, 1, "goroutine-leak/warning"},
		{"leak found critical, culprit third", leak, []string{"goroutine-leak/critical:a,b," + site}, true, true, 3, "goroutine-leak/critical"},
		{"leak found, culprit fourth", leak, []string{"goroutine-leak/warning:a,b,c," + site}, true, false, 4, "goroutine-leak/warning"},
		{"leak found, culprit absent", leak, []string{"goroutine-leak/warning:a"}, true, false, 0, "goroutine-leak/warning"},
		{"leak only at info", leak, []string{"goroutine-leak/info:" + site}, false, false, 0, "goroutine-leak/info"},
		{"another kind", leak, []string{"heap-leak/critical:" + site}, false, false, 0, "heap-leak/critical"},
		{"nothing", leak, nil, false, false, 0, "none"},
		{"fixed, nothing", fixed, nil, true, true, 0, "none"},
		{"fixed, info only", fixed, []string{"allocation-hotspot/info:x"}, true, true, 0, "allocation-hotspot/info"},
		{"fixed, a warning", fixed, []string{"allocation-hotspot/info:x", "heap-leak/warning:y"}, false, false, 0, "allocation-hotspot/info heap-leak/warning"},
		{"no culprit expected", noCulprit, []string{"transient-spike/warning"}, true, true, 0, "transient-spike/warning"},
		{"second acceptable kind", either, []string{"gc-overhead/warning:x", "allocation-hotspot/warning:reverseproxy.Handler.bufferedBody"}, true, true, 1, "gc-overhead/warning allocation-hotspot/warning"},
		{"acceptable kind at info", either, []string{"allocation-hotspot/info:reverseproxy.Handler.bufferedBody"}, false, false, 0, "allocation-hotspot/info"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r result
			judge(&r, diag(t, tt.findings...), tt.v)
			if r.Verdict != tt.verdict || r.Right != tt.right || r.CulpritRank != tt.rank {
				t.Errorf("verdict %v right %v rank %d; want %v %v %d", r.Verdict, r.Right, r.CulpritRank, tt.verdict, tt.right, tt.rank)
			}
			if got := foundString(r.Found); got != tt.wantFoundForReport {
				t.Errorf("found %q, want %q", got, tt.wantFoundForReport)
			}
			if r.Summary.GoroutinesPeak != 1815 {
				t.Errorf("summary not kept: %+v", r.Summary)
			}
		})
	}
}

func TestReadDiagnosisRejects(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"notjson.json": "goroutine-leak",
		"other.json":   `{"schema":"something/else","findings":[]}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		if _, err := readDiagnosis(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("readDiagnosis(%s) = %v; want an error naming the file", name, err)
		}
	}
	if _, err := readDiagnosis(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("readDiagnosis took a missing file")
	}
}

func TestPrintTable(t *testing.T) {
	rs := []result{
		{Program: "coredns-axfr", Version: "v1.12.3", Role: before, Expect: "goroutine-leak", ExpectKinds: []string{"goroutine-leak"}, Culprits: []string{"x"},
			Found:   []finding{{Kind: "goroutine-leak", Severity: "warning", TopCulprit: "github.com/coredns/coredns/plugin/file.(*Zone).Transfer.func1.1"}},
			Verdict: true, CulpritRank: 1, Right: true, Summary: summary{Samples: 60},
			Before: reading{Goroutines: 29, HeapAlloc: 3 << 20}, After: reading{Goroutines: 1815, HeapAlloc: 40 << 20, RSS: 80 << 20, HWM: 90 << 20, LeakServed: true, ProvenLeaked: 1790}},
		{Program: "coredns-axfr", Version: "v1.14.3", Role: after, Expect: "none",
			Found: []finding{{Kind: "allocation-hotspot", Severity: "warning"}}, Summary: summary{Samples: 60}},
		{Program: "caddy-chunked", Version: "v2.6.3", Role: before, Expect: "transient-spike", Skipped: "build: 403 Forbidden"},
	}
	var b bytes.Buffer
	printTable(&b, rs)
	out := b.String()
	for _, want := range []string{
		"file.(*Zone).Transfer.func1.1", // import path dropped up to the package name
		"#1", "29->1815 (1790 proven)", "3M->40M", "80M (90M)", "right", "wrong",
		"skipped: build: 403 Forbidden",
		"1 of 2 judged cases right",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSelectCases(t *testing.T) {
	progs := catalogue()
	all, err := selectCases(progs, nil)
	if err != nil || len(all) < 8 {
		t.Fatalf("all cases: %d, %v", len(all), err)
	}
	one, err := selectCases(progs, []string{"nats-queue-unsub@v2.9.0", "coredns-axfr"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range one {
		got = append(got, c.prog.name+"@"+c.ver.version)
	}
	if strings.Join(got, " ") != "nats-queue-unsub@v2.9.0 coredns-axfr@v1.12.3 coredns-axfr@v1.12.4 coredns-axfr@v1.14.3" {
		t.Errorf("selected %v", got)
	}
	for _, bad := range []string{"nope", "coredns-axfr@v9"} {
		if _, err := selectCases(progs, []string{bad}); err == nil {
			t.Errorf("selectCases(%q) selected something", bad)
		}
	}
}

// TestCatalogue checks what the runner relies on: every buggy version names what memdoctor
// should find, every fixed one expects nothing, every program has one of each.
func TestCatalogue(t *testing.T) {
	names := map[string]bool{}
	for _, p := range catalogue() {
		if names[p.name] {
			t.Errorf("%s listed twice", p.name)
		}
		names[p.name] = true
		if p.setup == nil || p.bug == "" || p.trigger == "" || len(p.links) == 0 || !strings.HasPrefix(p.pkg, p.module) {
			t.Errorf("%s: incomplete entry", p.name)
		}
		roles := map[string]int{}
		for _, v := range p.versions {
			roles[v.role]++
			if (v.role == after) != (len(v.expect) == 0) {
				t.Errorf("%s@%s: role %s expects %q", p.name, v.version, v.role, v.expect)
			}
		}
		if roles[before] != 1 || roles[after] != 1 {
			t.Errorf("%s: %v; want one version before the fix and one after", p.name, roles)
		}
	}
}

func TestBinName(t *testing.T) {
	for pkg, want := range map[string]string{
		"github.com/coredns/coredns":                          "coredns",
		"github.com/nats-io/nats-server/v2":                   "nats-server",
		"github.com/caddyserver/caddy/v2/cmd/caddy":           "caddy",
		"github.com/prometheus/alertmanager/cmd/alertmanager": "alertmanager",
	} {
		if got := (&program{pkg: pkg}).binName(); got != want {
			t.Errorf("binName(%s) = %s, want %s", pkg, got, want)
		}
	}
}

// TestRejudge re-diagnoses a saved run with a stand-in memdoctor whose report finds a
// goroutine leak at site.go: the buggy case turns right, the fixed one wrong.
func TestRejudge(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "memdoctor")
	diagnosis := `{"schema":"memdoctor/diagnosis/v1","findings":[{"kind":"goroutine-leak","severity":"critical","culprits":[{"function":"example.com/p.site"}]}]}`
	script := "#!/bin/sh\n[ \"$1 $2\" = \"report --json\" ] || exit 9\n[ -d \"$4\" ] || exit 8\necho '" + diagnosis + "' > \"$3\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	rs := []result{
		{Program: "p", Version: "v1", Role: before, Expect: "goroutine-leak", ExpectKinds: []string{"goroutine-leak"}, Culprits: []string{"p.site"}, Dir: "/elsewhere/p@v1"},
		{Program: "p", Version: "v2", Role: after, Expect: "none", Dir: "/elsewhere/p@v2"},
		{Program: "q", Version: "v1", Role: before, Expect: "heap-leak", Skipped: "build failed"},
	}
	for _, c := range []string{"p@v1", "p@v2"} {
		os.MkdirAll(filepath.Join(run, c, "session"), 0o755)
	}
	if err := writeJSON(filepath.Join(run, resultsFile), rs); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rejudge(context.Background(), options{rejudge: run, memdoctor: fake}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 4 || !strings.Contains(lines[1], " right ") || !strings.Contains(lines[2], " wrong ") ||
		!strings.Contains(lines[3], "skipped: build failed") || !strings.Contains(out.String(), "1 of 2 judged cases right") {
		t.Errorf("rejudged table:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(run, "p@v1", "rejudged.json")); err != nil {
		t.Errorf("the fresh diagnosis is not kept beside the session: %v", err)
	}
}

// TestLibLines: a library program's expected line is its culprit's call of the library's
// constructor, in the source under testdata/libs.
func TestLibLines(t *testing.T) {
	calls := map[string]string{"lib-sqlite": "sql.Open(", "lib-nats": "nats.Connect(", "lib-redis": "redis.NewClient(", "lib-grpc": "grpc.NewClient("}
	for _, p := range libPrograms() {
		src, err := os.ReadFile(filepath.Join("testdata", "libs", p.local, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		v := p.versions[0]
		fn := strings.TrimPrefix(v.culprits[0], "main.(*service).")
		start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "func (s *service) "+fn+"(") })
		if start < 0 || v.line <= start+1 || v.line > len(lines) || !strings.Contains(lines[v.line-1], calls[p.name]) {
			t.Errorf("%s: line %d is not %s's call %s (the function starts at line %d)", p.name, v.line, v.culprits[0], calls[p.name], start+1)
		}
	}
}

// TestJudgeLine: a version that expects a line is right only when its culprit is named there.
func TestJudgeLine(t *testing.T) {
	v := version{version: "leak", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"main.(*service).balance"}, line: 24}
	for line, right := range map[int]bool{24: true, 30: false} {
		var d diagnosis
		js := fmt.Sprintf(`{"findings":[{"kind":"goroutine-leak","severity":"warning","culprits":[{"function":"main.(*service).balance","line":%d}]}]}`, line)
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatal(err)
		}
		var r result
		judge(&r, &d, v)
		if r.Right != right || r.CulpritLine != line {
			t.Errorf("named at line %d: right %v (line %d), want %v", line, r.Right, r.CulpritLine, right)
		}
	}
}
