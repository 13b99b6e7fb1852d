package evidence

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/internal/pprofio"
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
	cost     map[string]int64 // by path: the estimate of each kept profile
	held     int64            // their sum
	maxBytes int64            // maxParsedBytes
	failed   map[string]error
	tables   map[tableKey]*culprit.Table
	groups   map[string][]GoroutineGroup
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
	if p, ok := st.byPath[path]; ok {
		if i := slices.Index(st.order, path); i >= 0 { // most recently used last
			st.order = append(slices.Delete(st.order, i, i+1), path)
		}
		return p, nil
	}
	if err, ok := st.failed[path]; ok {
		return nil, err
	}
	p, cost, err := st.limits.ReadFileCost(filepath.Base(path), path)
	if err != nil {
		st.failed[path] = err
		st.notes = append(st.notes, fmt.Sprintf("skipped profile %v", err))
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

func (st *store) note(s string) {
	st.mu.Lock()
	st.notes = append(st.notes, s)
	st.mu.Unlock()
}

// ProfileNotes returns what could not be read among the profiles used so far.
func (ev *Evidence) ProfileNotes() []string {
	st := ev.profiles
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

// heapTotals sums a heap profile's sample types.
func heapTotals(p *profile.Profile) HeapTotal {
	var t HeapTotal
	for i, st := range p.SampleType {
		var sum int64
		for _, s := range p.Sample {
			if i < len(s.Value) {
				sum += s.Value[i]
			}
		}
		switch st.Type {
		case "inuse_space":
			t.InuseSpace = sum
		case "inuse_objects":
			t.InuseObjects = sum
		case "alloc_space":
			t.AllocSpace = sum
		case "alloc_objects":
			t.AllocObjects = sum
		}
	}
	return t
}

// countTotal is the sum of a count profile's first sample type (goroutines).
func countTotal(p *profile.Profile) float64 {
	var n int64
	for _, s := range p.Sample {
		if len(s.Value) > 0 {
			n += s.Value[0]
		}
	}
	return float64(n)
}

// profileFallbacks reads what only profiles show when nothing finer did: the live heap and
// the allocation counters from heap profiles, goroutine counts from goroutine profiles, and
// the leaked goroutines from goroutineleak profiles (always: nothing else proves them).
func (b *sessionBuild) profileFallbacks() {
	ev := b.ev
	needLive := countOf(b.live) < len(ev.Heaps)
	needAlloc := countOf(b.allocB) < len(ev.Heaps)
	if needLive || needAlloc {
		for _, s := range ev.Heaps {
			p, err := ev.Profile(s)
			if err != nil {
				continue
			}
			t := heapTotals(p)
			if needLive && t.InuseSpace > 0 {
				b.live.add(SourceHeapProfile, 0, s.T, float64(t.InuseSpace))
			}
			if needAlloc && t.AllocSpace > 0 {
				b.allocB.addCounter(SourceHeapProfile, s.T, float64(t.AllocSpace))
				b.allocO.addCounter(SourceHeapProfile, s.T, float64(t.AllocObjects))
			}
		}
	}
	if countOf(b.goroutines) < len(ev.GoroutineSnaps) {
		for _, s := range ev.GoroutineSnaps {
			if p, err := ev.Profile(s); err == nil {
				b.goroutines.add(SourceGoroutineProfile, 1, s.T, countTotal(p))
			}
		}
	}
	for _, s := range ev.LeakSnaps {
		if p, err := ev.Profile(s); err == nil {
			b.leak.add(SourceLeakProfile, 1, s.T, countTotal(p))
		}
	}
}

// countOf is the most readings any source of a quantity has.
func countOf(m multi) int {
	n := 0
	for _, b := range m {
		n = max(n, b.count())
	}
	return n
}
