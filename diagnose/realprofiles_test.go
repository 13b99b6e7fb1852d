package diagnose

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/session"
)

// End to end: real profiles of other programs (testdata/profiles) in a session on disk.

// sharedProfiles holds real profiles of other programs (see PROVENANCE.tsv there).
const sharedProfiles = "../testdata/profiles"

// sessionOfProfiles writes a session holding the given heap profiles at the given times, and
// no samples: what a watch of a remote service without MemStats would leave.
func sessionOfProfiles(t *testing.T, paths []string, times []time.Time, mainModule string) *session.Session {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	w, err := session.Create(dir, session.Manifest{Mode: "watch", Start: times[0], Target: session.Target{MainModule: mainModule}})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteProfile(session.KindHeap, times[i], "", b); err != nil {
			t.Fatal(err)
		}
	}
	w.UpdateManifest(func(m *session.Manifest) { m.End = times[len(times)-1] })
	if err := w.Close(session.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParcaSeries runs the rules on a real series of heap snapshots of one process (parca,
// 3 s apart), where 90 MB of Badger arenas appear between two snapshots.
func TestParcaSeries(t *testing.T) {
	dir := filepath.Join(sharedProfiles, "parca_heap_series")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var times []time.Time
	for _, e := range entries {
		ns, err := strconv.ParseInt(strings.TrimSuffix(e.Name(), ".pb.gz"), 10, 64)
		if err != nil {
			continue
		}
		paths = append(paths, filepath.Join(dir, e.Name()))
		times = append(times, time.Unix(0, ns).UTC())
	}
	s := sessionOfProfiles(t, paths, times, "github.com/parca-dev/parca")
	d := diagnoseSession(t, s, Options{})
	if d.Summary.HeapProfiles != len(paths) || d.Summary.HeapLivePeakBytes == 0 {
		t.Errorf("summary: %+v", d.Summary)
	}
	// The live heap of a profiles-only session is each snapshot's inuse_space, as of its last GC.
	last, err := os.Open(paths[len(paths)-1])
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	p, err := profile.Parse(last)
	if err != nil {
		t.Fatal(err)
	}
	var inuse int64
	for _, smp := range p.Sample {
		inuse += smp.Value[3] // alloc_objects, alloc_space, inuse_objects, inuse_space
	}
	if p.SampleType[3].Type != "inuse_space" || d.Summary.HeapLiveLatestBytes != uint64(inuse) {
		t.Errorf("live heap at the end = %d, the last snapshot's inuse_space is %d", d.Summary.HeapLiveLatestBytes, inuse)
	}
	if d.Breakdown.Peak != nil && d.Breakdown.Peak.GoSource != "" {
		t.Errorf("a breakdown from profiles alone claims Go figures: %+v", d.Breakdown.Peak)
	}
	for _, f := range d.Findings {
		t.Logf("%s %s: %s", f.Severity, f.Kind, f.Title)
		checkFinding(t, f)
		// Whatever a rule blames in this series must be parca's own code (its Badger
		// metastore), not Badger's internals: parca is the main module.
		if len(f.Culprits) > 0 && !strings.HasPrefix(f.Culprits[0].Function, "github.com/parca-dev/parca/") {
			t.Errorf("%s blames %s first, want parca's own code", f.Kind, f.Culprits[0].Function)
		}
	}
	// One jump then a plateau is not a steady leak.
	for _, f := range d.Findings {
		if f.Kind == KindHeapLeak {
			t.Errorf("a single step reported as a heap leak: %s", f.Title)
		}
	}
}

// TestSharedProfilesDoNotBreakRules runs the rules on every shared profile, alone and in
// pairs of unrelated processes: no panic, well-formed findings.
func TestSharedProfilesDoNotBreakRules(t *testing.T) {
	entries, err := os.ReadDir(sharedProfiles)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var all []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".pb.gz") || strings.HasSuffix(e.Name(), ".pb") || strings.HasSuffix(e.Name(), ".heap")) {
			all = append(all, filepath.Join(sharedProfiles, e.Name()))
		}
	}
	for i, p := range all {
		q := all[(i+1)%len(all)]
		t.Run(filepath.Base(p), func(t *testing.T) {
			s := sessionOfProfiles(t, []string{p, q}, []time.Time{t0, t0.Add(30 * time.Second)}, "")
			d := diagnoseSession(t, s, Options{})
			for _, f := range d.Findings {
				checkFinding(t, f)
			}
		})
	}
}

// checkFinding checks what every finding must have.
func checkFinding(t *testing.T, f Finding) {
	t.Helper()
	known := false
	for _, k := range Kinds {
		known = known || k == f.Kind
	}
	if !known || f.Severity.Rank() == 0 || f.Title == "" || f.Detail == "" || len(f.Evidence) == 0 {
		t.Errorf("malformed finding: %+v", f)
	}
	for name := range f.Evidence {
		if !strings.Contains(name, "_") {
			t.Errorf("evidence %q has no unit in its name", name)
		}
	}
	for _, c := range f.Culprits {
		if c.Function == "" || c.Share < 0 || c.Share > 1.0001 {
			t.Errorf("malformed culprit: %+v", c)
		}
	}
}
