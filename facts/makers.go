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
	// Libs are the packages whose goroutines grew (their start functions').
	Libs []string
	// Makers are the program's functions that called into those packages, the most
	// retained first: what the leaked goroutines hold was allocated through these calls (the
	// requests a leaked client connection carries were built in them), or, when nothing
	// retained was sampled, what was allocated through them.
	Makers []Maker
	// Old and New are the heap profiles compared.
	Old, New string
}

// Maker is one function of the program that called into a library whose goroutines grew.
type Maker struct {
	Site  Site
	Stack []string
	// Held is the growth of the memory in use allocated through its calls into the library
	// between the first and last periodic heap profiles; Allocated what was allocated through
	// them since the program started, as the last of them counts it (cumulative: more
	// samples than the window's share, and the same calls).
	Held, Allocated int64
}

// libraryGroups is how many of the sites that grew most (and of those proved leaked) are
// looked at for a library's goroutines.
const libraryGroups = 3

// minShareOfTop: of those, the sites with at least a quarter of the first's goroutines.
const minShareOfTop = 4

// madeOf names the program's code behind the library goroutines among the sites that grew
// most, most first (the sites proved leaked, when there are), when the first of them is a
// library's (nil when it is the program's own, or no pair of heap profiles says).
//
// The program's calls into the API whose sampled calls reached the code of the type whose
// goroutines grew (net/http's Client, whose requests made round trips on a persistConn) are
// looked for first, every caller of that API alike; failing those, its calls into the
// package at all.
func madeOf(ev *evidence.Evidence, sites []GoroutineGroup) *Made {
	if len(sites) == 0 || ev.Program(sites[0].Culprit.Function) {
		return nil
	}
	var libs, types []string
	for _, g := range sites {
		if ev.Program(g.Culprit.Function) {
			continue
		}
		start := evidence.StartFunction(g.Stack)
		for _, fn := range []string{start, g.CreatedBy} {
			if pkg := evidence.PackagePath(fn); pkg != "" && !ev.Program(fn) && !evidence.IsRuntime(fn) {
				libs = appendNew(libs, pkg)
				if t := receiver(fn); t != "" {
					types = appendNew(types, t)
				}
			}
		}
	}
	refs := ev.PeriodicHeaps()
	if len(libs) == 0 || len(refs) < 2 {
		return nil
	}
	m := &Made{Libs: libs, Old: refs[0].Path, New: refs[len(refs)-1].Path}
	for _, scope := range [][]string{entries(ev, refs[0], refs[len(refs)-1], types), libs} {
		if len(scope) == 0 {
			continue
		}
		held := callsInto(ev, &refs[0], refs[len(refs)-1], "inuse_space", scope)
		alloc := callsInto(ev, nil, refs[len(refs)-1], "alloc_space", scope)
		for fn, mk := range held {
			if mk.Held = mk.delta; mk.Held > 0 {
				mk.Allocated = max(alloc[fn].value(), 0)
				m.Makers = append(m.Makers, mk.Maker)
			}
		}
		for fn, mk := range alloc {
			if held[fn].value() <= 0 && mk.delta > 0 {
				mk.Allocated = mk.delta
				m.Makers = append(m.Makers, mk.Maker)
			}
		}
		if len(m.Makers) > 0 {
			break
		}
	}
	if len(m.Makers) == 0 {
		return nil
	}
	slices.SortFunc(m.Makers, func(a, b Maker) int {
		return cmp.Or(cmp.Compare(b.Held, a.Held), cmp.Compare(b.Allocated, a.Allocated), strings.Compare(a.Site.Function, b.Site.Function))
	})
	return m
}

// entries are the library's API the program called directly in the allocation stacks that
// reached the code of types: the API whose calls made the goroutines (net/http's Client,
// whose Do's round trip runs on a persistConn). An entry is the called method's receiver
// type (its dot ending it: every method of net/http's Client, Get as well as Do, since a
// heap profile samples one allocation in 512 KiB and may have caught the round trip under
// one caller's Do and never under another's Get), or, for a function, the function itself
// with "=" before it. Every call of it counts, not only the sampled ones that reached the
// type.
func entries(ev *evidence.Evidence, old, new Snapshot, types []string) []string {
	var out []string
	visit := func(site Site, stack []string, v int64) {
		if i := slices.Index(stack, site.Function); i > 0 && v > 0 && ev.Program(site.Function) && inScopes(stack[:i], types) {
			if t := receiver(stack[i-1]); t != "" {
				out = appendNew(out, t)
			} else {
				out = appendNew(out, "="+stack[i-1])
			}
		}
	}
	for _, s := range []Snapshot{old, new} {
		for _, typ := range []string{"inuse_space", "alloc_space"} {
			_ = ev.EachStack(s, typ, visit) // an unreadable profile names no entry
		}
	}
	return out
}

// receiver is the package-qualified receiver type of a method, with the dot after it
// ("net/http.(*persistConn)." of "net/http.(*persistConn).readLoop"); "" for a function.
func receiver(fn string) string {
	pkg := evidence.PackagePath(fn)
	if pkg == "" || len(fn) <= len(pkg)+1 {
		return ""
	}
	rest := fn[len(pkg)+1:]
	if strings.HasPrefix(rest, "(") {
		if i := strings.Index(rest, ")."); i > 0 {
			return fn[:len(pkg)+1+i+2]
		}
		return ""
	}
	if i := strings.IndexByte(rest, '.'); i > 0 && !strings.HasPrefix(rest[i+1:], "func") {
		return fn[:len(pkg)+1+i+1]
	}
	return ""
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// makerDelta is a maker with its value's growth between two profiles.
type makerDelta struct {
	Maker
	delta int64
}

func (m *makerDelta) value() int64 {
	if m == nil {
		return 0
	}
	return m.delta
}

// callsInto sums one sample type's growth from old (nil: from nothing) to new by the program's function that
// called into one of scopes (package paths, receiver types with their dot: a frame of theirs
// nearer the leaf than the program's; or, after "=", the function it called directly).
func callsInto(ev *evidence.Evidence, old *Snapshot, new Snapshot, typ string, scopes []string) map[string]*makerDelta {
	out := map[string]*makerDelta{}
	add := func(sign int64) func(Site, []string, int64) {
		return func(site Site, stack []string, v int64) {
			i := slices.Index(stack, site.Function)
			if i <= 0 || !ev.Program(site.Function) || !inScopes(stack[:i], scopes) && !slices.Contains(scopes, "="+stack[i-1]) {
				return
			}
			m, ok := out[site.Function]
			if !ok {
				m = &makerDelta{Maker: Maker{Site: site, Stack: stack}}
				out[site.Function] = m
			}
			m.delta += sign * v
		}
	}
	if old != nil && ev.EachStack(*old, typ, add(-1)) != nil || ev.EachStack(new, typ, add(1)) != nil {
		return nil
	}
	return out
}

// inScopes reports a frame of one of scopes among frames: a package path matches its
// functions, a receiver type (ending in a dot) its methods.
func inScopes(frames []string, scopes []string) bool {
	for _, fr := range frames {
		for _, sc := range scopes {
			if strings.HasSuffix(sc, ".") && strings.HasPrefix(fr, sc) || evidence.PackagePath(fr) == sc {
				return true
			}
		}
	}
	return false
}
