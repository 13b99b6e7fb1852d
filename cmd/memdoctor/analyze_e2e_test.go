package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// recorded holds folders of profiles recorded from a real leaking program
// (source/pprofdir/testdata/record.sh).
const recorded = "../../source/pprofdir/testdata"

// analyzeJSON runs memdoctor analyze --json - and decodes the diagnosis.
func analyzeJSON(t *testing.T, args ...string) *diagnose.Diagnosis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := memdoctor(t, ctx, append([]string{"analyze", "--json", "-"}, args...)...)
	if res.code != 0 {
		t.Fatalf("analyze %v: exit %d: %s", args, res.code, res.stderr)
	}
	var d diagnose.Diagnosis
	if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
		t.Fatalf("analyze --json -: %v\n%s", err, res.stdout)
	}
	return &d
}

func finding(d *diagnose.Diagnosis, k diagnose.Kind) *diagnose.Finding {
	for i := range d.Findings {
		if d.Findings[i].Kind == k {
			return &d.Findings[i]
		}
	}
	return nil
}

func notJudged(d *diagnose.Diagnosis, k diagnose.Kind) *diagnose.NotJudged {
	for i := range d.NotJudged {
		if d.NotJudged[i].Kind == k {
			return &d.NotJudged[i]
		}
	}
	return nil
}

// noWarning fails when a diagnosis warns.
func noWarning(t *testing.T, d *diagnose.Diagnosis) {
	t.Helper()
	for _, f := range d.Findings {
		if f.Severity.Rank() >= diagnose.Warning.Rank() {
			t.Errorf("a healthy series warns: %s %s: %s", f.Severity, f.Kind, f.Title)
		}
	}
}

// TestAnalyzeRecordedHeapLeak is the reported bug: a folder of 13 heap profiles of a leaking
// program (curl'd every 5 s, named heap_N.pb.gz) said "no memory problem found". It is a
// confirmed heap leak, blamed on the cache that never evicts.
func TestAnalyzeRecordedHeapLeak(t *testing.T) {
	d := analyzeJSON(t, filepath.Join(recorded, "heapleak"))
	f := finding(d, diagnose.KindHeapLeak)
	if f == nil || f.Confidence != diagnose.Confirmed || f.Severity.Rank() < diagnose.Warning.Rank() {
		t.Fatalf("no confirmed heap leak: %+v\nnot judged: %+v", d.Findings, d.NotJudged)
	}
	if len(f.Culprits) == 0 || f.Culprits[0].Function != "main.(*store).remember" {
		t.Errorf("culprits %+v, want main.(*store).remember", f.Culprits)
	}
	if d.Source != "profiles" || d.Summary.HeapProfiles != 13 || d.Healthy() {
		t.Errorf("source %q, %d heap profiles", d.Source, d.Summary.HeapProfiles)
	}
	// The rise that has not come back at the end is the leak, not a spike in progress.
	if f := finding(d, diagnose.KindTransientSpike); f != nil {
		t.Errorf("the leak is also called a spike: %s", f.Title)
	}
}

// TestAnalyzeHandMadeSession: the same profiles in a session directory, named as memdoctor
// names its snapshots, give the same verdict; named anyhow, the session says how to read
// them.
func TestAnalyzeHandMadeSession(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(recorded, "heapleak", "*.pb.gz"))
	ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
	var times []time.Time
	for _, f := range files {
		info, err := ev.ReadProfileInfo(f)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, info.Time)
	}
	// The session spans the profiles, as if it had recorded them: ending now would leave the
	// heap unseen for however long ago they were recorded, and a leak unseen that long is only
	// suspected.
	dir := filepath.Join(t.TempDir(), "s")
	w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: slices.MinFunc(times, time.Time.Compare), End: slices.MaxFunc(times, time.Time.Compare)})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		b, _ := os.ReadFile(f)
		if _, err := w.WriteProfile(session.KindHeap, times[i], "", b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(session.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	d := analyzeJSON(t, dir)
	if f := finding(d, diagnose.KindHeapLeak); f == nil || f.Confidence != diagnose.Confirmed {
		t.Errorf("the session of the same profiles: %+v", d.Findings)
	}
	// Named anyhow inside profiles/: not part of the session, and the notes say what to do.
	bad := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(filepath.Join(bad, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "manifest.json"), []byte(`{"format":"memdoctor/session/v1","mode":"watch"}`), 0o600)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(bad, "profiles", filepath.Base(f)), b, 0o600)
	}
	d = analyzeJSON(t, bad)
	if d.Healthy() || notJudged(d, diagnose.KindHeapLeak) == nil || !strings.Contains(strings.Join(d.Notes, "\n"), "memdoctor analyze "+filepath.Join(bad, "profiles")) {
		t.Errorf("a session of badly named profiles: findings %+v, notes %q", d.Findings, d.Notes)
	}
	d = analyzeJSON(t, filepath.Join(bad, "profiles"))
	if f := finding(d, diagnose.KindHeapLeak); f == nil || f.Confidence != diagnose.Confirmed {
		t.Errorf("its profiles folder: %+v", d.Findings)
	}
}

// TestAnalyzeHealthySeries: a real healthy series (parca, 10 heap profiles 3 s apart, a
// single step of Badger arenas) and a recorded one (garbage only) give no warning.
func TestAnalyzeHealthySeries(t *testing.T) {
	for _, dir := range []string{"../../testdata/profiles/parca_heap_series", filepath.Join(recorded, "healthy")} {
		d := analyzeJSON(t, dir)
		noWarning(t, d)
		if f := finding(d, diagnose.KindHeapLeak); f != nil {
			t.Errorf("%s: heap leak %s", dir, f.Title)
		}
	}
}

// TestAnalyzeGoroutinePileUp: 13 goroutine profiles of a program whose late senders block
// for ever: a confirmed goroutine leak at the blocked send; one profile of it alone is a
// suspected pile-up, said as a snapshot.
func TestAnalyzeGoroutinePileUp(t *testing.T) {
	d := analyzeJSON(t, filepath.Join(recorded, "goroutines"))
	f := finding(d, diagnose.KindGoroutineLeak)
	if f == nil || f.Confidence != diagnose.Confirmed || len(f.Culprits) == 0 || f.Culprits[0].Function != "main.backend" {
		t.Fatalf("goroutine leak: %+v", d.Findings)
	}
	for _, one := range []string{filepath.Join(recorded, "goroutines", "g-013.prof"), filepath.Join(recorded, "goroutine-debug2.txt.gz")} {
		d = analyzeJSON(t, one)
		f = finding(d, diagnose.KindGoroutineLeak)
		if f == nil || !f.Snapshot || f.Confidence != diagnose.Suspected || f.Culprits[0].Function != "main.backend" {
			t.Errorf("%s: %+v", one, d.Findings)
		}
	}
}

// TestAnalyzeLeakProfile: one goroutineleak profile of the same pile-up, from the program built
// with Go 1.27, proves the leak by itself: a confirmed finding, not a snapshot suspicion; next
// to a goroutine profile, too.
func TestAnalyzeLeakProfile(t *testing.T) {
	for _, args := range [][]string{{filepath.Join(recorded, "leakprofile", "leaked.pb.gz")}, {filepath.Join(recorded, "leakprofile")}} {
		d := analyzeJSON(t, args...)
		f := finding(d, diagnose.KindGoroutineLeak)
		if f == nil || f.Confidence != diagnose.Confirmed || f.Snapshot || f.Evidence["leaked_goroutines_count"] < 100 || f.Culprits[0].Function != "main.backend" {
			t.Errorf("%v: %+v", args, d.Findings)
		}
	}
}

// TestAnalyzeSlowSeries: five heap profiles 90 s apart of a slow leak are a legitimate input:
// the verdict is honest (suspected, saying how much more to give), never silently healthy;
// with the program's gctrace log (times as docker logs --timestamps writes them), the GC
// timeline confirms it.
func TestAnalyzeSlowSeries(t *testing.T) {
	heaps, _ := filepath.Glob(filepath.Join(recorded, "slow90s", "heap-*.pb.gz"))
	if len(heaps) != 5 {
		t.Fatalf("%d heap profiles", len(heaps))
	}
	d := analyzeJSON(t, heaps...)
	f := finding(d, diagnose.KindHeapLeak)
	if f == nil || f.Confidence != diagnose.Suspected || f.WatchMoreSeconds <= 0 || d.Healthy() {
		t.Errorf("five profiles: %+v (not judged %+v)", d.Findings, d.NotJudged)
	}
	d = analyzeJSON(t, filepath.Join(recorded, "slow90s"))
	f = finding(d, diagnose.KindHeapLeak)
	if f == nil || f.Confidence != diagnose.Confirmed || f.Culprits[0].Function != "main.(*store).remember" {
		t.Errorf("with gctrace: %+v", d.Findings)
	}
	if d.Summary.GCSource != "gctrace" || d.Summary.GCCount < 30 || notJudged(d, diagnose.KindGCOverhead) != nil {
		t.Errorf("GC timeline: %+v, not judged %+v", d.Summary, d.NotJudged)
	}
}

// TestAnalyzeUntimedGCTrace: the same log without times is placed by assuming its last line
// was written when the file was last modified, and the notes say so.
func TestAnalyzeUntimedGCTrace(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(recorded, "slow90s", "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`(?m)^\S+ `)
	log := filepath.Join(t.TempDir(), "stderr.txt")
	os.WriteFile(log, stamp.ReplaceAll(b, nil), 0o600)
	end := time.Date(2026, 11, 24, 5, 49, 50, 0, time.UTC)
	os.Chtimes(log, end, end)
	d := analyzeJSON(t, log)
	if d.Summary.GCCount < 30 || !strings.Contains(strings.Join(d.Notes, "\n"), "has no times on its lines") {
		t.Errorf("summary %+v, notes %q", d.Summary, d.Notes)
	}
	if got := d.Window.End; got.After(end) || got.Before(end.Add(-time.Minute)) {
		t.Errorf("the log ends at %v, its file was last modified at %v", got, end)
	}
}

// TestAnalyzeBadPaths: a PATH that cannot be read as asked is a one-line error naming it,
// exit 1; a folder holding a file named with terminal escapes prints them escaped.
func TestAnalyzeBadPaths(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(readme, []byte("hello\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"/nonexistent/profiles"}, "/nonexistent/profiles: no such file or directory: give a memdoctor session"},
		{[]string{readme}, readme + ": text without GODEBUG=gctrace=1 lines"},
		{[]string{"../../testdata/profiles/node_exporter_cpu_10s.pb.gz"}, "a CPU profile, not about memory"},
		{[]string{t.TempDir()}, "no heap, goroutine or goroutineleak profile and no gctrace log found (it is empty)"},
	} {
		res := memdoctor(t, ctx, append([]string{"analyze"}, c.args...)...)
		last := lastLine(res.stderr)
		if res.code != 1 || strings.Count(res.stderr, "\n") != 1 || !strings.Contains(last, c.want) {
			t.Errorf("analyze %v: exit %d, stderr %q, want one line with %q", c.args, res.code, res.stderr, c.want)
		}
	}
	evil := filepath.Join(dir, "\x1b]0;pwned\x07\x1b[2Jheap.pb.gz")
	os.WriteFile(evil, []byte("\x1f\x8bnot a gzip stream"), 0o600)
	b, _ := os.ReadFile(filepath.Join(recorded, "heapleak", "heap_5.pb.gz"))
	os.WriteFile(filepath.Join(dir, "ok.pb.gz"), b, 0o600)
	res := memdoctor(t, ctx, "analyze", dir)
	if res.code != 0 || strings.ContainsAny(res.stdout+res.stderr, "\x1b\x07") || !strings.Contains(res.stdout, `\x1b]0;pwned`) {
		t.Errorf("exit %d; a raw escape reached the terminal, or the file is not named:\n%q", res.code, res.stdout)
	}
}

// TestAnalyzeHTMLFromProfiles: the HTML report of a folder of profiles is the same page, from
// the evidence alone: its snapshots, the findings, what was not judged.
func TestAnalyzeHTMLFromProfiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "r.html")
	res := memdoctor(t, ctx, "analyze", "--html", out, filepath.Join(recorded, "slow90s"))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"From profiles", "heap-leak", "Goroutine snapshot", "Not judged", "main.(*store).remember", "heap-5.pb.gz"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
