package facts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/evidence"
)

// Made is, for goroutines that pile up in a library's code (net/http's connection loops, a
// client library's workers) with no frame of the program in their stacks, the program's
// code that made them: its calls into the library that started them.
type Made struct {
	// Libs are the packages whose goroutines grew (their start functions' and creators').
	Libs []string
	// Creators are the functions whose go statements started them, when the goroutine
	// profiles record it (a debug=2 dump's "created by", a profile read from the process's
	// memory); nil when they do not (the runtime's proto and debug=1 profiles).
	Creators []string
	// By is how the makers' calls were told from the program's other calls into Libs.
	By MadeBy
	// Makers are the program's functions that made them, the most retained first, each at
	// the line of its call that made them: what the leaked goroutines hold was allocated
	// through these calls (the requests a leaked client connection carries were built in
	// them), or, when nothing retained was sampled, what was allocated through them.
	Makers []Maker
	// Old and New are the heap profiles compared.
	Old, New string
}

// MadeBy is how the program's calls that made a library's goroutines were found.
type MadeBy string

const (
	// MadeByCreator: the heap profiles sampled the calls under the function that started
	// them (Made.Creators), the program's call above it.
	MadeByCreator MadeBy = "creator"
	// MadeByConstructor: the program calls methods of the goroutines' own type (a *sql.DB's
	// QueryRowContext) or their creator is a plain function, so a value was made first, by a
	// call of the library's functions (sql.Open, a client's constructor), and its goroutines
	// with it.
	MadeByConstructor MadeBy = "constructor"
	// MadeByUse: the goroutines' type is reached only through these calls (net/http's
	// persistConn through a Client's Get and Do), which made it on demand.
	MadeByUse MadeBy = "use"
	// MadeByPackage: any call into the libraries.
	MadeByPackage MadeBy = "package"
)

// Maker is one function of the program that called into a library whose goroutines grew.
type Maker struct {
	// Site is the function, at the line of its call that made the goroutines (of its calls
	// of the kind Made.By says, the one most retained through, else most allocated through).
	Site  Site
	Stack []string
	// Call is the library's function that line calls (database/sql.Open), "" when unknown.
	Call string
	// Held is the growth of the memory in use allocated through its calls into the library
	// between the first and last periodic heap profiles; Allocated what was allocated through
	// them since the program started, as the last of them counts it (cumulative: more
	// samples than the window's share, and the same calls).
	Held, Allocated int64
	// LineBy says how Site's line was told: from the program's source, the call that reaches
	// the go statement starting the goroutines (Via: the calls from it down to that
	// statement's function); or the call of the kind Made.By says through which most was
	// retained, else allocated.
	LineBy MadeLine
	Via    []string
}

// MadeLine is how a maker's line was told.
type MadeLine string

const (
	// LineBySource: the program's source was at hand (the files its binary names exist), and
	// the line's call reaches, through static calls, the go statement that starts the
	// goroutines (collect/reach).
	LineBySource MadeLine = "source"
	// LineByAllocation: the line of the function's calls into the library through which most
	// was retained, else allocated: the profiles do not record which call started the
	// goroutines, and the source was not at hand or no static call reaches their go statement.
	LineByAllocation MadeLine = "allocation"
)

// maxSourceMakers bounds the makers whose line is looked for in the program's source.
const maxSourceMakers = 3

// linesFromSource tells the makers' lines from the program's source where it is at hand: the
// call of each that reaches the go statement starting the groups' goroutines (or one of their
// creators). A maker whose source says nothing keeps its line, told by allocation.
func linesFromSource(ev *evidence.Evidence, m *Made, groups []leakGroup, sites []GoroutineGroup) {
	q := evidence.ReachQuery{Creators: m.Creators, Weight: map[string]int{}}
	for i, lg := range groups {
		if lg.start != "" {
			q.Starts = appendNew(q.Starts, lg.start)
			if i < len(sites) {
				q.Weight[lg.start] += sites[i].Count
			}
		}
	}
	for i := range m.Makers {
		mk := &m.Makers[i]
		mk.LineBy = LineByAllocation
		if i >= maxSourceMakers || mk.Site.File == "" {
			continue
		}
		q.Function, q.File, q.Lines = mk.Site.Function, mk.Site.File, []int64{mk.Site.Line}
		a, ok, err := ev.CallReaching(q)
		if err != nil || !ok {
			continue
		}
		mk.Site.Line, mk.Call, mk.LineBy, mk.Via = a.Line, a.Callee, LineBySource, a.Via
	}
}

// libraryGroups is how many of the sites that grew most (and of those proved leaked) are
// looked at for a library's goroutines.
const libraryGroups = 3

// minShareOfTop: of those, the sites with at least a quarter of the first's goroutines.
const minShareOfTop = 4

// madeOf names the program's code behind the library goroutines among the sites that grew
// most, most first (the sites proved leaked, when there are), when the first of them is a
// library's (nil when it is the program's own, or no pair of heap profiles says). known are
// groups of other goroutine profiles, whose recorded creators count for the same start
// functions; running says whether a function sat on a goroutine's stack all along (in the
// first and the last goroutine profiles).
//
// The program's calls into the libraries are told apart, each way tried in turn until one
// names a maker (see MadeBy): the calls whose sampled stacks reached a function recorded as
// their creator; the library's constructors, when the program calls the goroutines' own
// type (it made a value before using it) or the creator is a plain function; the calls
// through which the goroutines' type ran, when the program never calls that type itself
// (every caller of that API alike); the constructors otherwise; any call into the libraries.
// Goroutines started by a function that runs all along (a server's accept loop: what it
// starts is its clients' doing, not a call's) are left out when others grew beside them.
func madeOf(ev *evidence.Evidence, sites, known []GoroutineGroup, running func(string) bool) *Made {
	if len(sites) == 0 || ev.Program(sites[0].Culprit.Function) {
		return nil
	}
	var groups []leakGroup
	var libSites []GoroutineGroup // the sites of groups, one for one
	for _, g := range sites {
		if !ev.Program(g.Culprit.Function) {
			groups = append(groups, leakGroupOf(ev, g, known))
			libSites = append(libSites, g)
		}
	}
	var keptSites []GoroutineGroup
	var kept []leakGroup
	for i, lg := range groups {
		if lg.creator == "" || !running(lg.creator) {
			kept, keptSites = append(kept, lg), append(keptSites, libSites[i])
		}
	}
	if len(kept) > 0 {
		groups, libSites = kept, keptSites
	}
	var libs, types, creators []string
	for _, lg := range groups {
		for _, l := range lg.libs {
			libs = appendNew(libs, l)
		}
		for _, t := range lg.types {
			types = appendNew(types, t)
		}
		if lg.creator != "" {
			creators = appendNew(creators, lg.creator)
		}
	}
	refs := ev.PeriodicHeaps()
	if len(libs) == 0 || len(refs) < 2 {
		return nil
	}
	old, new := refs[0], refs[len(refs)-1]
	m := &Made{Libs: libs, Creators: creators, Old: old.Path, New: new.Path}
	for _, w := range waysOf(groups, creators, libs, apiOf(ev, old, new, types)) {
		if mk := makersBy(ev, old, new, w.match); len(mk) > 0 {
			m.By, m.Makers = w.by, mk
			linesFromSource(ev, m, groups, libSites)
			return m
		}
	}
	return nil
}

// way is one way of telling the calls that made a library's goroutines: match sees the
// library's frames of a call, the called function last.
type way struct {
	by    MadeBy
	match func(lib []string) bool
}

// waysOf are the ways to try, in turn (see madeOf). A group whose own type the program calls,
// or whose creator is a plain function, was made with a value a constructor returned; the
// others on demand, by the calls through which their type's code ran.
func waysOf(groups []leakGroup, creators, libs []string, api api) []way {
	var made, all []string // constructors' scopes: of those groups, of every group
	var uses []string      // the API whose calls ran the others' types
	for _, lg := range groups {
		direct := slices.ContainsFunc(lg.types, func(t string) bool { return api.called[t] })
		sc := lg.scope()
		all = appendAll(all, sc)
		if direct || lg.creator != "" && !isMethod(lg.creator) {
			made = appendAll(made, sc)
			continue
		}
		for _, t := range lg.types {
			uses = appendAll(uses, api.reached[t])
		}
	}
	// A constructor is a plain function of the library, or of a wrapper around it (sqlx.Open
	// calling sql.Open); never another standard library package's function whose stack
	// happens to reach it (io.WriteString to a net/http ResponseWriter).
	constructor := func(scope []string) func(lib []string) bool {
		return func(lib []string) bool {
			entry := lib[len(lib)-1]
			return !isMethod(entry) && inScopes(lib, scope) && (inScopes([]string{entry}, scope) || !evidence.IsStdlib(entry))
		}
	}
	var ways []way
	if len(creators) > 0 {
		ways = append(ways, way{MadeByCreator, func(lib []string) bool {
			return slices.ContainsFunc(lib, func(f string) bool { return slices.Contains(creators, f) })
		}})
	}
	if len(made) > 0 {
		ways = append(ways, way{MadeByConstructor, constructor(made)})
	}
	if len(uses) > 0 {
		ways = append(ways, way{MadeByUse, func(lib []string) bool {
			return inScopes(lib, uses) || slices.Contains(uses, "="+lib[len(lib)-1])
		}})
	}
	if len(made) == 0 {
		ways = append(ways, way{MadeByConstructor, constructor(all)})
	}
	return append(ways, way{MadeByPackage, func(lib []string) bool { return inScopes(lib, libs) }})
}

// leakGroup is one site of goroutines that grew in a library's code: its start function, the
// function recorded as its creator ("" when none is), their packages and receiver types.
type leakGroup struct {
	start, creator string
	libs, types    []string
}

func leakGroupOf(ev *evidence.Evidence, g GoroutineGroup, known []GoroutineGroup) leakGroup {
	lg := leakGroup{start: evidence.StartFunction(g.Stack), creator: creatorOf(g, known)}
	if lg.creator == lg.start || ev.Program(lg.creator) || evidence.IsRuntime(lg.creator) {
		lg.creator = ""
	}
	for _, fn := range []string{lg.start, lg.creator} {
		if pkg := evidence.PackagePath(fn); pkg != "" && !ev.Program(fn) && !evidence.IsRuntime(fn) {
			lg.libs = appendNew(lg.libs, pkg)
			if t := receiver(fn); t != "" {
				lg.types = appendNew(lg.types, t)
			}
		}
	}
	return lg
}

// scope is where a constructor of the group's goroutines is called: any package of the
// library's module (a client's constructor in its top package starts its pool's goroutines
// in an internal one), or the standard library packages of its start function and creator.
func (lg leakGroup) scope() []string {
	var out []string
	for _, pkg := range lg.libs {
		if root := evidence.ModuleRoot(pkg); root != pkg {
			out = appendNew(out, root+"/...")
		} else {
			out = appendNew(out, pkg)
		}
	}
	return out
}

// creatorOf is the function that started a group's goroutines, as a goroutine profile
// recorded it: the group's own record, else that of a group of another profile (known) with
// the same start function; "" when none records it.
func creatorOf(g GoroutineGroup, known []GoroutineGroup) string {
	if g.Created {
		return g.CreatedBy
	}
	start := evidence.StartFunction(g.Stack)
	for _, k := range known {
		if k.Created && start != "" && evidence.StartFunction(k.Stack) == start {
			return k.CreatedBy
		}
	}
	return ""
}

// api is what the program's calls into the goroutines' types say, from the allocation
// stacks: called, the types whose methods the program calls itself; reached, by type, the
// API the program called directly in the stacks that reached that type's code (net/http's
// Client, whose Do's round trip runs on a persistConn). An entry of reached is the called
// method's receiver type (its dot ending it: every method of net/http's Client, Get as well
// as Do, since a heap profile samples one allocation in 512 KiB and may have caught the round
// trip under one caller's Do and never under another's Get), or, for a function, the function
// itself with "=" before it: every call of it counts, not only the sampled ones that reached
// the type.
type api struct {
	called  map[string]bool
	reached map[string][]string
}

func apiOf(ev *evidence.Evidence, old, new Snapshot, types []string) api {
	out := api{called: map[string]bool{}, reached: map[string][]string{}}
	visit := func(frames []Site, v int64) {
		if v <= 0 {
			return
		}
		eachCall(ev.Program, frames, func(_ Site, lib []string) bool {
			entry := lib[len(lib)-1]
			t := receiver(entry)
			if t != "" && slices.Contains(types, t) {
				out.called[t] = true
			}
			key := t
			if t == "" {
				key = "=" + entry
			}
			for _, typ := range types {
				if inScopes(lib, []string{typ}) {
					out.reached[typ] = appendNew(out.reached[typ], key)
				}
			}
			return false
		})
	}
	for _, s := range []Snapshot{old, new} {
		for _, typ := range []string{"inuse_space", "alloc_space"} {
			_ = ev.EachFrames(s, typ, visit) // an unreadable profile names no entry
		}
	}
	return out
}

// makersBy are the program's functions whose calls into a library match (match sees the
// library's frames below the program's, leaf first, the called function last): those through
// which memory still in use grew from old to new, then those that allocated through them
// (as new counts it) with nothing in use sampled, most first. Each is named at the line of its
// matching calls most retained through, else most allocated through.
func makersBy(ev *evidence.Evidence, old, new Snapshot, match func(lib []string) bool) []Maker {
	held := callsInto(ev, &old, new, "inuse_space", match)
	alloc := callsInto(ev, nil, new, "alloc_space", match)
	var out []Maker
	for fn, mk := range held {
		if h := mk.total(); h > 0 {
			m := mk.at(mk.top())
			m.Held, m.Allocated = h, max(alloc[fn].total(), 0)
			out = append(out, m)
		}
	}
	for fn, mk := range alloc {
		if held[fn].total() <= 0 && mk.total() > 0 {
			m := mk.at(mk.top())
			m.Allocated = mk.total()
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Maker) int {
		return cmp.Or(cmp.Compare(b.Held, a.Held), cmp.Compare(b.Allocated, a.Allocated), strings.Compare(a.Site.Function, b.Site.Function))
	})
	return out
}
