package report

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// SnapshotRefs lists the session's profiles that pprof opens (heap and goroutine protos, not
// goroutine text), in time order. A snapshot's index in this list is its ID on the page and in
// the URLs of `memdoctor serve`.
func SnapshotRefs(s *session.Session) []session.ProfileRef {
	var out []session.ProfileRef
	for _, p := range s.Profiles {
		if p.Kind == session.KindHeap || p.Kind == session.KindGoroutine {
			out = append(out, p)
		}
	}
	return out
}

// snapshots is the catalogue of a session's snapshots with their IDs.
type snapshots struct {
	dir    string
	refs   []session.ProfileRef
	byName map[string]int
	byPath map[string]int // the paths the session reader gave, under the directory as opened
}

// evidenceRefs lists the evidence's heap and goroutine snapshots in time order: the
// catalogue of evidence that comes from no session (a folder of profiles).
func evidenceRefs(ev *evidence.Evidence) []session.ProfileRef {
	var out []session.ProfileRef
	for _, snaps := range [][]evidence.Snapshot{ev.Heaps, ev.GoroutineSnaps} {
		for _, s := range snaps {
			out = append(out, session.ProfileRef{Kind: s.Kind, Time: s.T, Label: s.Label, Path: s.Path})
		}
	}
	slices.SortStableFunc(out, func(a, b session.ProfileRef) int { return a.Time.Compare(b.Time) })
	return out
}

// newSnapshots catalogues the session's snapshots, or without a session the evidence's.
func newSnapshots(s *session.Session, ev *evidence.Evidence) *snapshots {
	c := &snapshots{byName: make(map[string]int), byPath: make(map[string]int)}
	if s != nil {
		c.dir, c.refs = s.Dir, SnapshotRefs(s)
	} else {
		c.refs = evidenceRefs(ev)
	}
	for i, r := range c.refs {
		c.byName[filepath.Base(r.Path)] = i
		c.byPath[filepath.Clean(r.Path)] = i
	}
	return c
}

// pair is two snapshots to compare, old then new.
type pair struct {
	old, new     string // paths, usable from the directory memdoctor was run in
	oldID, newID int    // IDs, -1 when the file is not one of the session's snapshots
	kind         string // heap or goroutine
	oldT, newT   time.Time
	named        bool // the finding named them (else memdoctor chose the ones around it)
}

// resolve returns the path, usable from the working directory, of a profile a finding names.
// A fresh diagnosis names the session's snapshots by the paths the session reader gave them,
// which already hold the session directory as it was opened (relative when it was): those are
// used as they are. Other paths are absolute, relative to the session directory
// ("profiles/heap-....pb.gz", as the writer records them), or a bare file name in profiles/.
func (c *snapshots) resolve(p string) string {
	if i, ok := c.byPath[filepath.Clean(p)]; ok {
		return c.refs[i].Path
	}
	if filepath.IsAbs(p) {
		return p
	}
	if _, ok := c.byName[p]; ok && filepath.Dir(p) == "." {
		return filepath.Join(c.dir, session.ProfilesDir, p)
	}
	return filepath.Join(c.dir, p)
}

// ref describes a profile path: its ID, kind and time, from the catalogue or its file name.
func (c *snapshots) ref(path string) (id int, kind string, t time.Time) {
	name := filepath.Base(path)
	if i, ok := c.byName[name]; ok {
		return i, c.refs[i].Kind, c.refs[i].Time
	}
	if r, err := session.ParseProfileFileName(name); err == nil {
		return -1, r.Kind, r.Time
	}
	return -1, session.KindHeap, time.Time{}
}

// named returns the pair a finding names in Finding.Profiles (its first and last).
func (c *snapshots) named(f diagnose.Finding) (pair, bool) {
	if len(f.Profiles) < 2 {
		return pair{}, false
	}
	p := pair{old: c.resolve(f.Profiles[0]), new: c.resolve(f.Profiles[len(f.Profiles)-1]), named: true}
	p.oldID, p.kind, p.oldT = c.ref(p.old)
	p.newID, _, p.newT = c.ref(p.new)
	return p, true
}

// around returns the snapshots of the right kind that bracket the finding's span: the last at
// or before its start and the first at or after its end (the session's first and last when it
// has no span).
func (c *snapshots) around(f diagnose.Finding) (pair, bool) {
	kind := session.KindHeap
	if f.Kind == diagnose.KindGoroutineLeak {
		kind = session.KindGoroutine
	}
	var of []int
	for i, r := range c.refs {
		if r.Kind == kind {
			of = append(of, i)
		}
	}
	if len(of) < 2 {
		return pair{}, false
	}
	o, n := of[0], of[len(of)-1]
	if !f.Start.IsZero() {
		for _, i := range of {
			if !c.refs[i].Time.After(f.Start) {
				o = i
			}
		}
	}
	if !f.End.IsZero() {
		for k := len(of) - 1; k >= 0; k-- {
			if !c.refs[of[k]].Time.Before(f.End) {
				n = of[k]
			}
		}
	}
	if o >= n {
		return pair{}, false
	}
	return pair{
		old: c.refs[o].Path, new: c.refs[n].Path, oldID: o, newID: n, kind: kind,
		oldT: c.refs[o].Time, newT: c.refs[n].Time,
	}, true
}

// sampleIndex is the sample type that shows a finding of kind k in a heap profile: what is
// allocated for spikes, hotspots and GC pressure, what is held for the rest. Goroutine
// profiles have one sample type ("").
func sampleIndex(k diagnose.Kind, profileKind string) string {
	if profileKind == session.KindGoroutine {
		return ""
	}
	switch k {
	case diagnose.KindTransientSpike, diagnose.KindAllocationHotspot, diagnose.KindGCOverhead:
		return "alloc_space"
	}
	return "inuse_space"
}
