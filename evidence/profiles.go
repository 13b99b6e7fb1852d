package evidence

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/session"
)

// store loads stored profiles, keeping the few most recently used parsed, and remembers
// which could not be read.
type store struct {
	limits pprofio.Limits
	opts   culprit.Options

	mu       sync.Mutex
	order    []string // least recently used first
	byPath   map[string]*profile.Profile
	inHand   map[string]*profile.Profile // profiles given in hand (AddProfile), never dropped
	cost     map[string]int64            // by path: the estimate of each kept profile
	held     int64                       // their sum
	maxBytes int64                       // maxParsedBytes
	failed   map[string]error
	tables   map[tableKey]*culprit.Table
	groups   map[string][]GoroutineGroup
	infos    map[string]*ProfileInfo
	noted    map[string]bool
	dumps    map[string]bool // goroutine text dumps: their groups come from the text
	notes    []string
}

type tableKey struct{ path, typ string }

// The store keeps at most maxParsed parsed profiles, and no more than maxParsedBytes of them
// as pprofio estimates what they took to parse (the one just read is kept whatever its
// size), the least recently used going first: rules compare pairs. A profile can take up to
// pprofio.Default.Memory (128 MiB): four of them kept took analyze to 412 MiB and report
// --html to 468 MiB on a session of four profiles at that limit (bench/hostile).
const (
	maxParsed      = 4
	maxParsedBytes = 160 << 20
)

// maxTables bounds the per-profile site tables kept (small: sites, not samples).
const maxTables = 256

func newStore(maxBytes int64, mainModule string) *store {
	limits := pprofio.Default
	if maxBytes > 0 {
		limits.Decompressed = maxBytes
	}
	return &store{
		limits: limits, opts: culprit.Options{MainModule: mainModule},
		byPath: map[string]*profile.Profile{}, cost: map[string]int64{}, maxBytes: maxParsedBytes, failed: map[string]error{},
		tables: map[tableKey]*culprit.Table{}, groups: map[string][]GoroutineGroup{},
		infos: map[string]*ProfileInfo{}, noted: map[string]bool{}, dumps: map[string]bool{},
	}
}

// Profile loads a snapshot's profile. A profile that cannot be read is named once in the
// notes, and never parsed again.
func (ev *Evidence) Profile(s Snapshot) (*profile.Profile, error) {
	st := ev.profiles
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.getLocked(s.Path)
}

func (st *store) getLocked(path string) (*profile.Profile, error) {
	if p, ok := st.inHand[path]; ok {
		return p, nil
	}
	if p, ok := st.byPath[path]; ok {
		if i := slices.Index(st.order, path); i >= 0 { // most recently used last
			st.order = append(slices.Delete(st.order, i, i+1), path)
		}
		return p, nil
	}
	if err, ok := st.failed[path]; ok {
		st.fail(path, err) // named once, when a rule first asks for it
		return nil, err
	}
	p, cost, err := st.parseCost(path)
	if err != nil {
		st.fail(path, err)
		return nil, err
	}
	for len(st.order) > 0 && (len(st.order) >= maxParsed || st.held+cost > st.maxBytes) {
		old := st.order[0]
		st.held -= st.cost[old]
		delete(st.byPath, old)
		delete(st.cost, old)
		st.order = st.order[1:]
	}
	st.order = append(st.order, path)
	st.byPath[path], st.cost[path] = p, cost
	st.held += cost
	return p, nil
}

// hold keeps a profile given in hand under path, with its summary.
func (st *store) hold(path string, p *profile.Profile) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.inHand == nil {
		st.inHand = map[string]*profile.Profile{}
	}
	st.inHand[path] = p
	st.infos[path] = infoOf(pprofio.SummaryOf(p), pprofio.FormatProto)
}

// fail remembers that path cannot be read, and names it once in the notes.
func (st *store) fail(path string, err error) {
	st.failed[path] = err
	if !st.noted[path] {
		st.noted[path] = true
		st.notes = append(st.notes, fmt.Sprintf("skipped profile %v", err))
	}
}

func (st *store) note(s string) {
	st.mu.Lock()
	st.notes = append(st.notes, s)
	st.mu.Unlock()
}

// ProfileNotes returns what could not be read among the profiles used so far.
func (ev *Evidence) ProfileNotes() []string {
	st := ev.profiles
	if st == nil { // evidence built by hand, without profiles
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]string(nil), st.notes...)
}

// listSnapshots lists the session's stored profiles inside the window.
func (b *sessionBuild) listSnapshots(s *session.Session) {
	for _, ref := range s.Profiles {
		kind, ok := kindOf(ref.Kind)
		if !ok || !b.in(ref.Time) {
			continue
		}
		snap := Snapshot{Kind: kind, T: ref.Time, Label: ref.Label, Path: ref.Path}
		switch kind {
		case session.KindHeap:
			b.ev.Heaps = append(b.ev.Heaps, snap)
		case session.KindGoroutine:
			b.ev.GoroutineSnaps = append(b.ev.GoroutineSnaps, snap)
		case kindGoroutineLeak:
			b.ev.LeakSnaps = append(b.ev.LeakSnaps, snap)
			b.ev.LeakProfileServed = true
		}
		b.saw(ref.Time)
	}
}

// HeapTotal is the sum of each sample type of one heap profile.
type HeapTotal struct {
	InuseSpace, InuseObjects, AllocSpace, AllocObjects int64
}

// profileFallbacks reads what only profiles show when nothing finer did: the live heap and
// the allocation counters from heap profiles, goroutine counts from goroutine profiles, and
// the leaked goroutines from goroutineleak profiles (always: nothing else proves them). A
// session and evidence built with New (a folder of profiles) both come through here. Each
// profile's totals are read once (ProfileInfo), without parsing its stacks; a delta heap
// profile (?seconds=N) holds a window's changes, not the heap, and gives neither.
func (b *sessionBuild) profileFallbacks() {
	ev := b.ev
	info := func(s Snapshot) (*ProfileInfo, bool) {
		in, err := ev.profiles.info(s.Path, true)
		return in, err == nil
	}
	needLive := countOf(b.m[qLive]) < len(ev.Heaps)
	needAlloc := countOf(b.m[qAllocBytes]) < len(ev.Heaps)
	if needLive || needAlloc {
		prev, repeats := int64(-1), 0
		var fresh liveFreshness
		for _, s := range ev.Heaps {
			in, ok := info(s)
			if !ok || in.Window > 0 {
				continue
			}
			t := in.Heap
			// A heap profile's inuse figures are those of the last completed GC: a profile
			// that repeats its predecessor's exactly saw no GC in between, and is the same
			// reading again, not a new one (counting it would draw a plateau where the heap
			// grew: between GCs that grow further and further apart, the last third of a
			// leaking series would read flat).
			if needLive && in.HasInuse && t.InuseSpace > 0 {
				if t.InuseSpace != prev {
					b.add(qLive, SourceHeapProfile, s.T, float64(t.InuseSpace))
					fresh.reading(s.T)
				} else {
					repeats++
					fresh.repeat(s.T)
				}
				prev = t.InuseSpace
			}
			if needAlloc && in.HasAlloc && t.AllocSpace > 0 {
				b.add(qAllocBytes, SourceHeapProfile, s.T, float64(t.AllocSpace))
				b.add(qAllocObjects, SourceHeapProfile, s.T, float64(t.AllocObjects))
			}
		}
		if hp := b.m[qLive].get(SourceHeapProfile); hp != nil && countOf(b.m[qLive]) == hp.count() {
			ev.LiveSeen = fresh.seen()
		}
		if repeats > 0 && b.m[qLive].get(SourceHeapProfile) != nil && countOf(b.m[qLive]) == b.m[qLive].get(SourceHeapProfile).count() {
			ev.Notes = append(ev.Notes, fmt.Sprintf("%d heap profile(s) repeat their predecessor's in-use heap exactly (no GC completed in between): "+
				"each counts as one reading of the live heap, at the time it was first seen", repeats))
		}
	}
	if countOf(b.m[qGoroutines]) < len(ev.GoroutineSnaps) {
		for _, s := range ev.GoroutineSnaps {
			if in, ok := info(s); ok {
				b.add(qGoroutines, SourceGoroutineProfile, s.T, float64(in.Goroutines))
			}
		}
	}
	for _, s := range ev.LeakSnaps {
		if in, ok := info(s); ok {
			b.add(qLeaked, SourceLeakProfile, s.T, float64(in.Goroutines))
		}
	}
}

// liveFreshness follows the fetches of a series of heap profiles, distinct readings and
// repeats, to tell how recent the last distinct reading is.
type liveFreshness struct {
	fetched time.Time // the latest fetch
	// prev and prevAfter: the previous distinct reading's fetch, and the fetch before it.
	prev, prevAfter, last, lastAfter time.Time
	repeatedPrev, repeatedLast       bool
}

func (f *liveFreshness) reading(t time.Time) {
	f.prev, f.prevAfter = f.last, f.lastAfter
	f.last, f.lastAfter = t, f.fetched
	f.repeatedPrev, f.repeatedLast = f.repeatedLast, false
	f.fetched = t
}

func (f *liveFreshness) repeat(t time.Time) {
	f.repeatedLast = true
	f.fetched = t
}

// seen is when the heap the last distinct reading shows was most likely measured, or zero
// when that is its own time. A profile that repeats its predecessor saw no GC complete in
// between: GCs ran less often than profiles were taken. Then the GC that published the last
// distinct profile was the only one since the previous distinct fetch, and the heap it shows
// is that of the GC before, which published the previous distinct profile: it completed
// between that profile's fetch and the fetch before it (at the middle, as likely as
// anywhere). That holds when the last reading followed repeats, and when repeats follow it.
func (f liveFreshness) seen() time.Time {
	if f.prev.IsZero() || !f.repeatedPrev && !f.repeatedLast {
		return time.Time{}
	}
	if f.prevAfter.IsZero() {
		return f.prev
	}
	return f.prevAfter.Add(f.prev.Sub(f.prevAfter) / 2)
}
