package report

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// keepScreenshot copies a screenshot to $MEMDOCTOR_SCREENSHOT_DIR when set, so that a person
// can look at it after the test's temporary directory is gone.
func keepScreenshot(t *testing.T, png string) {
	t.Helper()
	t.Logf("screenshot: %s", png)
	dir := os.Getenv("MEMDOCTOR_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(png))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot kept: %s", dst)
}

// TestHTMLReportOfLabSessionInBrowser records a real lab session with the memdoctor binary,
// makes its HTML report with `memdoctor report --html`, and loads it in headless Chromium, in
// light and in dark mode: no console error, every chart drawn, one card per finding.
func TestHTMLReportOfLabSessionInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("records a 30 s lab session")
	}
	b := newBrowser(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "memdoctor")
	build := exec.Command("go", "build", "-o", bin, "github.com/memdoctor/memdoctor/cmd/memdoctor")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "session")
	run := exec.Command(bin, "run", "--duration", "30s", "--interval", "3s", "--out", dir, "--", bin, "lab", "run", "json-whole")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("memdoctor run: %v\n%s", err, out)
	}
	page, diag := filepath.Join(tmp, "report.html"), filepath.Join(tmp, "diagnosis.json")
	rep := exec.Command(bin, "report", dir, "--html", page, "--json", diag)
	if out, err := rep.CombinedOutput(); err != nil {
		t.Fatalf("memdoctor report: %v\n%s", err, out)
	}
	var d diagnose.Diagnosis
	raw, err := os.ReadFile(diag)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, page)
	for _, dark := range []bool{false, true} {
		png := filepath.Join(tmp, "lab-json-whole-light.png")
		if dark {
			png = filepath.Join(tmp, "lab-json-whole-dark.png")
		}
		st := b.load(t, page, png, dark)
		checkPage(t, b, st, len(d.Findings))
		t.Logf("%d findings, %d charts drawn, %d flame graphs, ready %.0f ms after navigation", len(d.Findings), len(st.Charts), len(st.Flames), st.ReadyMS)
		if dark && st.DarkBg == "#ffffff" {
			t.Errorf("dark mode: the page kept its light background")
		}
		keepScreenshot(t, png)
	}
}

// TestHTMLReportSyntheticInBrowser loads the report of an hour-long synthetic session with
// findings of every shape (spans, snapshot pairs, culprits only, nothing to compare): every
// card and every flame graph must be drawn.
func TestHTMLReportSyntheticInBrowser(t *testing.T) {
	b := newBrowser(t)
	tmp := t.TempDir()
	sp := synthSpec{start: time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC), duration: time.Hour, sample: time.Second,
		gcEvery: 2 * time.Second, spikeEvery: 15 * time.Minute, profileEvery: 5 * time.Minute}
	s, ev, d := synthDiagnosed(t, filepath.Join(tmp, "session"), sp)
	page := filepath.Join(tmp, "synthetic.html")
	writePage(t, page, s, ev, d, HTMLOptions{Location: time.UTC, ZoneName: "UTC"})
	png := filepath.Join(tmp, "synthetic-1h.png")
	st := b.load(t, page, png, false)
	checkPage(t, b, st, len(d.Findings))
	if len(st.Flames) != len(d.Findings) {
		t.Errorf("%d flame graphs, want one per finding (%d)", len(st.Flames), len(d.Findings))
	}
	keepScreenshot(t, png)
}

// synthDiagnosed writes a synthetic session and gives it a diagnosis made here: the
// headline figures from the evidence and the synthetic findings. It does not run the
// diagnosis rules, whose cost on a long session is theirs to measure, not the report's.
func synthDiagnosed(t testing.TB, dir string, sp synthSpec) (*session.Session, *evidence.Evidence, *diagnose.Diagnosis) {
	t.Helper()
	synthSession(t, dir, sp)
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ev := evidenceOf(t, s)
	start, end := ev.Start, ev.End
	rss, _ := ev.RSS.Max()
	live, _ := ev.Live.Max()
	g, _ := ev.Goroutines.Max()
	sum := diagnose.Summary{
		MemoryBudgetBytes: 1 << 30, MemoryBudgetSource: "flag", CgroupLimitBytes: 2 << 30, GCSource: "gctrace",
		GCCount: uint64(ev.GCCycles.Increase() + 1), Samples: ev.Samples,
		HeapProfiles: len(ev.Heaps), GoroutineProfiles: len(ev.GoroutineSnaps),
		RSSPeakBytes: uint64(rss.V), RSSLatestBytes: uint64(ev.RSS.Last().V),
		HeapLivePeakBytes: uint64(live.V), HeapLiveLatestBytes: uint64(ev.Live.Last().V),
		GoroutinesPeak: int(g.V), GoroutinesLatest: int(ev.Goroutines.Last().V),
	}
	sum.RSSP99Bytes = sum.RSSPeakBytes
	sum.GCPerSecond = float64(sum.GCCount) / end.Sub(start).Seconds()
	d := &diagnose.Diagnosis{
		Schema: diagnose.Schema, Generated: end, Session: dir,
		Target:   diagnose.Target{PID: 4242, Name: "svc", GoVersion: "go1.26.0", Status: session.StatusComplete},
		Window:   diagnose.Window{Start: start, End: end, Seconds: end.Sub(start).Seconds()},
		Summary:  sum,
		Findings: synthFindings(s, sp),
	}
	return s, ev, d
}

func writePage(t testing.TB, path string, s *session.Session, ev *evidence.Evidence, d *diagnose.Diagnosis, opts HTMLOptions) int {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, s, ev, d, opts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// checkSelfContained fails when the page refers to anything outside itself.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script src", "<link ", "@import", "http://cdn", "https://cdn", "src=\"http"} {
		if bytes.Contains(b, []byte(bad)) {
			t.Errorf("the page is not self-contained: it contains %q", bad)
		}
	}
}

// TestHTMLSparseInBrowser loads the pages of sparse sessions (no samples; a remote service):
// whatever is missing is said, not thrown.
func TestHTMLSparseInBrowser(t *testing.T) {
	b := newBrowser(t)
	for name, s := range sparseSessions(t) {
		d := &diagnose.Diagnosis{Findings: []diagnose.Finding{{Kind: diagnose.KindHeapLeak, Severity: diagnose.Warning, Title: "t"}}}
		page := filepath.Join(t.TempDir(), name+".html")
		writePage(t, page, s, evidenceOf(t, s), d, HTMLOptions{Location: time.UTC})
		st := b.load(t, page, "", false)
		for _, e := range b.takeErrors() {
			t.Errorf("%s: browser: %s", name, e)
		}
		if st.ReadyMS < 0 || len(st.Charts) != st.Plots || st.Cards != 1 {
			t.Errorf("%s: ready %.0f, %d canvases for %d charts, %d cards", name, st.ReadyMS, len(st.Charts), st.Plots, st.Cards)
		}
		if name == "remote" && st.Plots != 4 {
			t.Errorf("remote: %d charts drawn, want 4", st.Plots)
		}
	}
}
