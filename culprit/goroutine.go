package culprit

import (
	"cmp"
	"slices"
	"strconv"
)

// GoroutineGroup is a set of goroutines with the same wait state, stack and
// creator: the unit whose count is watched across snapshots to find leaks.
type GoroutineGroup struct {
	// Key is stable across snapshots of one program: the wait state (when
	// known), the non-runtime frames as function:line (no arguments, no
	// offsets, no goroutine IDs, no wait durations) and the creator.
	Key string
	// State is the wait state: "chan receive", "select", "IO wait", ...
	// ("" when unknown, e.g. from a proto profile or a debug=1 dump).
	State string
	// Blocking is the innermost frame that is not runtime (e.g.
	// "main.sender" or "net/http.(*persistConn).readLoop"); for a goroutine
	// made only of runtime frames, its start function.
	Blocking string
	// CreatedBy is the function of the "created by" frame, "" if unknown.
	// Proto profiles and debug=1 dumps do not record it: there it is the
	// goroutine's start function (the root-most frame), and Created is false.
	CreatedBy string
	// Created says CreatedBy is the runtime's record of the function whose go
	// statement started the goroutines (a debug=2 dump's "created by", a goroutine
	// profile memdoctor read from the process's memory: its CreatedByLabel).
	Created bool
	// Culprit is the attribution of the stack to the program's own code;
	// when the stack has none, the creator if that is the program's own.
	Culprit Site
	Count   int
	// Leaked counts the goroutines the runtime's leak detector flagged
	// (Go 1.26 goroutineleak profile, or "(leaked)" in a debug=2 dump).
	Leaked int
	// WaitMinutes is the longest wait a debug=2 dump reported in the group
	// (", 3 minutes"); 0 when unknown or under a minute.
	WaitMinutes int
	Stack       []string // leaf first
}

// Start is the function the group's goroutines started in: the root-most frame of its stack
// ("" when the stack is empty or cut short, its root then some caller's). Goroutines that
// run are caught at whatever line they were at: their start stays the same.
func (g GoroutineGroup) Start() string {
	if len(g.Stack) == 0 || g.Stack[len(g.Stack)-1] == elidedFrame {
		return ""
	}
	return g.Stack[len(g.Stack)-1]
}

const (
	// maxGroups bounds the memory of grouping: goroutines of further
	// distinct stacks are counted in one overflow group.
	maxGroups = 1 << 16
	// maxFrames bounds the frames kept per goroutine (tracebacks print at
	// most 100, proto stacks hold at most 128).
	maxFrames = 1024
	// maxInterned bounds the string interning table.
	maxInterned = 1 << 17

	overflowKey   = "(other stacks: too many distinct goroutine stacks)"
	elidedFrame   = "...frames elided..."
	nonGoFrame    = "(non-Go function)"
	goexitFunc    = "runtime.goexit"
	keyFrameSep   = ';'
	keyFieldSep   = '|'
	keyCreatedPre = "created by "
)

// grouper accumulates goroutines into groups.
type grouper struct {
	opts   Options
	groups map[string]*GoroutineGroup
	key    []byte
	strs   map[string]string // interned strings
	fns    map[string]string // raw function name -> interned normalized name
}

func newGrouper(opts Options) *grouper {
	return &grouper{opts: opts, groups: make(map[string]*GoroutineGroup),
		strs: make(map[string]string), fns: make(map[string]string)}
}

// intern returns b as a string, shared with earlier equal strings, so that a
// dump with many goroutines of the same stack does not allocate per frame.
func (g *grouper) intern(b []byte) string {
	if s, ok := g.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(g.strs) < maxInterned {
		g.strs[s] = s
	}
	return s
}

// internFunc returns the normalized function name b (see normalizeFunc),
// interned.
func (g *grouper) internFunc(b []byte) string {
	if s, ok := g.fns[string(b)]; ok {
		return s
	}
	s := normalizeFunc(string(b))
	if len(g.fns) < maxInterned {
		g.fns[string(b)] = s
	}
	return s
}

// add records count goroutines (leaked of them flagged as leaked) in state
// with frames (leaf first) created by createdBy (fn "" when unknown; recorded
// when it is the runtime's record of the creator, not the start function).
func (g *grouper) add(state string, frames []frame, createdBy frame, recorded bool, count, leaked, waitMinutes int) {
	for len(frames) > 0 && frames[len(frames)-1].fn == goexitFunc {
		frames = frames[:len(frames)-1]
	}
	g.key = appendGroupKey(g.key[:0], state, frames, createdBy.fn)
	grp, ok := g.groups[string(g.key)]
	if !ok {
		if len(g.groups) >= maxGroups {
			g.key = append(g.key[:0], overflowKey...)
			grp, ok = g.groups[overflowKey]
		}
		if !ok {
			grp = g.newGroup(string(g.key), state, frames, createdBy)
			grp.Created = recorded && createdBy.fn != ""
			g.groups[grp.Key] = grp
		}
	}
	grp.Count += count
	grp.Leaked += leaked
	grp.WaitMinutes = max(grp.WaitMinutes, waitMinutes)
}

func (g *grouper) newGroup(key, state string, frames []frame, createdBy frame) *GoroutineGroup {
	if key == overflowKey {
		return &GoroutineGroup{Key: key, Blocking: unknownFunction, Culprit: Site{Function: unknownFunction}}
	}
	grp := &GoroutineGroup{
		Key:       key,
		State:     state,
		CreatedBy: createdBy.fn,
		Blocking:  blockingFrame(frames),
		Culprit:   attributeFrames(frames, g.opts),
		Stack:     frameNames(frames),
	}
	if !grp.Culprit.Own && createdBy.fn != "" {
		if c := classify(createdBy.fn, g.opts); c == classMain || c == classThirdParty {
			grp.Culprit = siteOf(createdBy, true)
		}
	}
	return grp
}

// appendGroupKey appends the group identity: state, the non-runtime frames
// (all frames when there are none) and the creator.
func appendGroupKey(dst []byte, state string, frames []frame, createdBy string) []byte {
	dst = append(dst, state...)
	dst = append(dst, keyFieldSep)
	n := len(dst)
	for pass := 0; pass < 2 && len(dst) == n; pass++ {
		for _, f := range frames {
			if pass == 0 && isRuntimeFunc(f.fn, PackagePath(f.fn)) {
				continue
			}
			if len(dst) > n {
				dst = append(dst, keyFrameSep)
			}
			dst = append(dst, f.fn...)
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, f.line, 10)
		}
	}
	dst = append(dst, keyFieldSep)
	dst = append(dst, keyCreatedPre...)
	return append(dst, createdBy...)
}

// blockingFrame is the innermost non-runtime frame, or for a goroutine made
// only of runtime frames the root-most one (its start function).
func blockingFrame(frames []frame) string {
	for _, f := range frames {
		if f.fn != elidedFrame && !isRuntimeFunc(f.fn, PackagePath(f.fn)) {
			return f.fn
		}
	}
	if len(frames) == 0 {
		return unknownFunction
	}
	return frames[len(frames)-1].fn
}

// result returns the groups, the largest first (ties: by key).
func (g *grouper) result() []GoroutineGroup {
	out := make([]GoroutineGroup, 0, len(g.groups))
	for _, grp := range g.groups {
		out = append(out, *grp)
	}
	slices.SortFunc(out, func(a, b GoroutineGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
	})
	return out
}
