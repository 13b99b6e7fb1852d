package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureDir is a real session: 30 s of the lab's json-whole scenario, trimmed to the
// snapshots the tests use.
const fixtureDir = "testdata/session-json-whole"

// evidenceOf builds the evidence of a session for the report to draw.
func evidenceOf(t testing.TB, s *session.Session) *evidence.Evidence {
	t.Helper()
	ev, err := evidence.FromSession(s, evidence.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func openFixture(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.Open(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fixtureDiagnosis is a diagnosis made by hand for the fixture, so that the golden file does
// not move when the diagnosis rules do: a spike naming two snapshots, retention naming none,
// and a hotspot naming the first and last.
func fixtureDiagnosis(s *session.Session) *diagnose.Diagnosis {
	at := func(v string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			panic(err)
		}
		return t
	}
	start, end := s.Window()
	return &diagnose.Diagnosis{
		Schema: diagnose.Schema, Generated: end, Session: s.Dir,
		Target: diagnose.Target{PID: 20569, Name: "md", GoVersion: "go1.26.8", Status: "complete"},
		Window: diagnose.Window{Start: start, End: end, Seconds: end.Sub(start).Seconds()},
		Summary: diagnose.Summary{
			RSSPeakBytes: 309 * mib, MemoryBudgetBytes: 512 * mib, MemoryBudgetSource: "flag", CgroupLimitBytes: 4 << 30,
		},
		Findings: []diagnose.Finding{
			{
				Kind: diagnose.KindTransientSpike, Severity: diagnose.Warning, Title: "the live heap spikes by 130 MiB",
				Evidence: map[string]float64{"spike_height_bytes": 130 * mib, "spike_duration_seconds": 0.55},
				Culprits: []diagnose.Culprit{{
					Function: "github.com/memdoctor/memdoctor/lab.(*importService).handleImport", File: "/work/main/lab/json_whole.go", Line: 84,
					Bytes: 1 << 30, Share: 0.99, Own: true, Stack: []string{"io.ReadAll", "github.com/memdoctor/memdoctor/lab.(*importService).handleImport"},
				}},
				Start:    at("2026-11-22T07:13:39.543774494Z"),
				End:      at("2026-11-22T07:13:40.116774494Z"),
				Profiles: []string{"profiles/heap-20261122T071339.505Z.pb.gz", "profiles/heap-20261122T071342.505Z.pb.gz"},
			},
			{
				Kind: diagnose.KindRuntimeRetention, Severity: diagnose.Info, Title: "102 MiB of RSS is free heap the runtime keeps",
				Evidence: map[string]float64{"retained_free_bytes": 102 * mib},
				Start:    start, End: end,
			},
			{
				Kind: diagnose.KindAllocationHotspot, Severity: diagnose.Critical, Title: "handleImport allocates 99% of all bytes",
				Evidence: map[string]float64{"alloc_bytes_per_second": 60 * mib},
				Profiles: []string{"profiles/heap-20261122T071328.756Z.pb.gz", "profiles/heap-20261122T071357.506Z.pb.gz"},
			},
		},
	}
}

func TestHTMLDataGolden(t *testing.T) {
	s := openFixture(t)
	data := BuildHTMLData(s, evidenceOf(t, s), fixtureDiagnosis(s), HTMLOptions{Location: time.UTC, ZoneName: "UTC"})
	got := goldenText(t, data)
	golden := filepath.Join("testdata", "htmldata.golden.txt")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestHTMLDataGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the page data differs from %s (run with -update after checking the change):\n%s", golden, firstDiff(string(want), string(got)))
	}
	// What the golden file must show, whatever its details.
	if len(data.Charts) != 4 {
		t.Fatalf("%d charts, want memory, heap, gc, goroutines", len(data.Charts))
	}
	for _, c := range data.Charts {
		if c.Empty != "" || len(c.X.v) == 0 || len(c.Series) == 0 {
			t.Errorf("chart %s has no data: %q", c.ID, c.Empty)
		}
		for _, s := range c.Series {
			if len(s.Values.v) != len(c.X.v) {
				t.Errorf("chart %s series %s: %d values for %d times", c.ID, s.Name, len(s.Values.v), len(c.X.v))
			}
		}
	}
	marks := data.Findings
	if len(marks) != 3 || marks[0].Kind != "allocation-hotspot" {
		t.Fatalf("findings not most severe first: %+v", marks)
	}
	for _, m := range marks {
		if m.Flame == nil || m.Flame.Total <= 0 || len(m.Flame.Nodes) < 2 {
			t.Errorf("finding %s has no flame graph", m.Kind)
		}
		if len(m.Pair) != 2 {
			t.Errorf("finding %s has no snapshot pair", m.Kind)
		}
	}
	if marks[0].SampleIndex != "alloc_space" || marks[2].SampleIndex != "inuse_space" {
		t.Errorf("sample indexes %q %q, want alloc_space for a hotspot, inuse_space for retention", marks[0].SampleIndex, marks[2].SampleIndex)
	}
}

// goldenText writes the page data one piece a line (each series on its own), compact JSON,
// so that a change shows as the lines it touches.
func goldenText(t *testing.T, d *PageData) []byte {
	t.Helper()
	var b bytes.Buffer
	line := func(label string, v any) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(label + " " + string(j) + "\n")
	}
	line("version", d.Version)
	line("t0", d.T0)
	line("end", d.End)
	line("zone", d.Zone)
	for _, c := range d.Charts {
		x, series := c.X, c.Series
		c.X, c.Series = nums{}, nil
		line("chart", c)
		line("  x", x)
		for _, s := range series {
			vals := s.Values
			s.Values = nums{}
			line("  series", s)
			line("    values", vals)
		}
	}
	for _, f := range d.Findings {
		fl := f.Flame
		f.Flame = nil
		line("finding", f)
		if fl != nil {
			meta := *fl
			meta.Nodes = nil
			line("  flame", meta)
			line("  nodes", fl.Nodes)
		}
	}
	line("snapshots", d.Snapshots)
	line("serve", d.Serve)
	return b.Bytes()
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n  want " + clip(al[i]) + "\n  got  " + clip(bl[i])
		}
	}
	return "lengths differ: want " + itoa(len(al)) + " lines, got " + itoa(len(bl))
}

func itoa(i int) string { return strconv.Itoa(i) }

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func TestHTMLPage(t *testing.T) {
	s := openFixture(t)
	d := fixtureDiagnosis(s)
	d.Findings[0].Title = `</script><script>alert("x")</script>`
	d.Findings[0].Advice = []string{"use <b>json.Decoder</b> & stream"}
	if len(d.Findings[0].Culprits) == 0 {
		t.Fatal("the fixture's first finding has no culprit")
	}
	d.Findings[0].Culprits[0].HeldBy = &holders.Culprit{Site: d.Findings[0].Culprits[0].Function, Samples: 3, Covered: 1,
		Paths: []holders.Path{{Expr: "main.registry[value].<i>history</i>[i]", Share: 1, Bytes: 48 << 20}}}
	var buf bytes.Buffer
	if err := HTML(&buf, s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, `<script>alert(`) || strings.Contains(page, "<b>json.Decoder</b>") || strings.Contains(page, "<i>history</i>") {
		t.Errorf("finding text is not escaped")
	}
	for _, want := range []string{
		"Content-Security-Policy", "default-src 'none'", `id="memdoctor-data"`, "uPlot", "Permission is hereby granted",
		`class="finding sev-critical"`, "go tool pprof -http=: -sample_index=alloc_space \\\n    -diff_base=",
		"Times are local time in UTC", "Resident memory", "GC cycles per second",
		`<ul class="held"><li>held by main.registry[value].&lt;i&gt;history&lt;/i&gt;[i], 100.0%, 48.0 MiB</li></ul>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<article class="finding`); n != len(d.Findings) {
		t.Errorf("%d cards, want %d", n, len(d.Findings))
	}
	if strings.Contains(page, `href="pprof/diff/`) {
		t.Errorf("a static page links to memdoctor serve's pprof UI")
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="memdoctor-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data element")
	}
	var data PageData
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("embedded data is not JSON: %v", err)
	}
	buf.Reset()
	if err := HTML(&buf, s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC, Serve: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `href="pprof/diff/`) || !strings.Contains(buf.String(), `id="picker"`) {
		t.Errorf("the served page has no pprof links or picker")
	}
}

// A day at one sample a second must stay a page a browser opens at once.
func TestHTMLSize24h(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 24-hour session")
	}
	sp := synthSpec{start: time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), duration: 24 * time.Hour, sample: time.Second,
		gcEvery: 2 * time.Second, spikeEvery: 3 * time.Hour, profileEvery: 10 * time.Minute}
	s, ev, d := synthDiagnosed(t, filepath.Join(t.TempDir(), "s"), sp)
	var buf bytes.Buffer
	if err := HTML(&buf, s, ev, d, HTMLOptions{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 3<<20 {
		t.Errorf("24-hour report is %s, want under 3 MiB", Bytes(uint64(buf.Len())))
	}
	t.Logf("24-hour report: %s", Bytes(uint64(buf.Len())))
}

// Sessions with little in them still make a page: no samples at all, or only the Go
// runtime's figures of a remote service.
func TestHTMLSparseSessions(t *testing.T) {
	for name, s := range sparseSessions(t) {
		d := &diagnose.Diagnosis{Findings: []diagnose.Finding{{Kind: diagnose.KindHeapLeak, Severity: diagnose.Warning, Title: "t"}}}
		var buf bytes.Buffer
		if err := HTML(&buf, s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data := BuildHTMLData(s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC})
		for _, c := range data.Charts {
			if c.Empty == "" && len(c.Series) == 0 {
				t.Errorf("%s: chart %s neither drawn nor explained", name, c.ID)
			}
			if name == "empty" && c.Empty == "" {
				t.Errorf("empty session: chart %s has data", c.ID)
			}
		}
		if name == "remote" {
			mem := data.Charts[0]
			if mem.Empty != "" || !strings.Contains(mem.Caption, "could not read this process's /proc") {
				t.Errorf("remote session: memory chart %q %q", mem.Empty, mem.Caption)
			}
			// MemStats gives GC CPU since the process started: without the remote process's
			// start time it is no rate, and the chart says so instead of drawing it.
			if gc := data.Charts[2]; len(gc.Series) != 1 || !strings.Contains(gc.Caption, "CPU time is unknown") {
				t.Errorf("remote MemStats GC CPU: series %+v, caption %q", gc.Series, gc.Caption)
			}
		}
	}
}

// sparseSessions are a session without samples and one of a remote service (Go figures only).
func sparseSessions(t *testing.T) map[string]*session.Session {
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	mk := func(name string, samples []session.Sample) *session.Session {
		dir := filepath.Join(t.TempDir(), name)
		w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: t0})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(session.StatusComplete, ""); err != nil {
			t.Fatal(err)
		}
		s, err := session.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var remote []session.Sample
	for i := range 20 {
		remote = append(remote, session.Sample{Time: t0.Add(time.Duration(i) * time.Second), Go: &session.GoMem{
			Source: "memstats", HeapObjectsBytes: uint64(50+i) * mib, HeapFreeBytes: 10 * mib, TotalBytes: uint64(70+i) * mib,
			GCCycles: uint64(i / 2), GCCPUFraction: 0.01, Goroutines: 10 + i,
		}})
	}
	return map[string]*session.Session{"empty": mk("empty", nil), "remote": mk("remote", remote)}
}
