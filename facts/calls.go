package facts

import (
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/evidence"
)

// The program's calls into a library, read from the heap profiles' stacks: where the program
// called it (its frame above the library's, at the call's line), what it called, and what
// those calls allocated and still hold. Pure functions of stacks and names, but for the
// profiles they read.

// eachCall calls fn for each of the program's calls into a library in a stack (frames leaf
// first), innermost first, until fn returns true: the program's frame that made the call (at
// the call's line) and the library's frames below it down to the leaf or to the program's
// next frame (a callback the library made into the program: a driver, a handler), leaf
// first, the called function last.
func eachCall(program func(string) bool, frames []Site, fn func(at Site, lib []string) bool) {
	var names []string
	from := 0 // the first library frame of the current run
	for i, f := range frames {
		if !program(f.Function) {
			continue
		}
		if i > from {
			if names == nil {
				names = make([]string, len(frames))
				for j, g := range frames {
					names[j] = g.Function
				}
			}
			at := f
			at.Own = true
			if fn(at, names[from:i]) {
				return
			}
		}
		from = i + 1
	}
}

// receiver is the package-qualified receiver type of a method, with the dot after it
// ("net/http.(*persistConn)." of "net/http.(*persistConn).readLoop"); "" for a function.
func receiver(fn string) string {
	pkg := evidence.PackagePath(fn)
	n := len(pkg)
	if pkg != "" && !strings.HasPrefix(fn, pkg) { // a dot in the last element, spelled %2e
		n += 2 * strings.Count(pkg[strings.LastIndexByte(pkg, '/')+1:], ".")
	}
	if pkg == "" || len(fn) <= n+1 {
		return ""
	}
	rest := fn[n+1:]
	if strings.HasPrefix(rest, "(") {
		if i := strings.Index(rest, ")."); i > 0 {
			return fn[:n+1+i+2]
		}
		return ""
	}
	i := strings.IndexAny(rest, ".[")
	if i > 0 && rest[i] == '[' { // a generic type's or function's arguments
		j := strings.IndexByte(rest, ']')
		if j < i || j+1 >= len(rest) || rest[j+1] != '.' {
			return ""
		}
		i = j + 1
	}
	if i > 0 && !closure(rest[i+1:]) {
		return fn[:n+1+i+1]
	}
	return ""
}

// closure reports whether the part of a function's name after its first dot names a closure
// or a go or defer statement's wrapper ("func1", "gowrap2"), not a method.
func closure(s string) bool {
	for _, p := range []string{"func", "gowrap", "deferwrap"} {
		if strings.HasPrefix(s, p) && len(s) > len(p) && s[len(p)] >= '0' && s[len(p)] <= '9' {
			return true
		}
	}
	return false
}

// isMethod reports whether fn is a method or a closure inside one: not a plain function of
// its package.
func isMethod(fn string) bool { return receiver(fn) != "" }

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// lineCalls is what one line of a program's function allocated through its calls into a
// library: the sum of one sample type's growth, and the heaviest sample's frames.
type lineCalls struct {
	site  Site
	call  string
	stack []string
	delta int64
	heavy int64 // the heaviest sample's value, whose stack is kept
}

// funcCalls is one program's function's calls into a library, by line.
type funcCalls struct {
	lines map[int64]*lineCalls
}

func (f *funcCalls) total() int64 {
	if f == nil {
		return 0
	}
	var n int64
	for _, l := range f.lines {
		n += l.delta
	}
	return n
}

// top is the line whose calls grew most (ties: the lower line).
func (f *funcCalls) top() *lineCalls {
	var best *lineCalls
	for _, l := range f.lines {
		if best == nil || l.delta > best.delta || l.delta == best.delta && l.site.Line < best.site.Line {
			best = l
		}
	}
	return best
}

// at is the maker a line of calls names.
func (f *funcCalls) at(l *lineCalls) Maker {
	return Maker{Site: l.site, Stack: l.stack, Call: l.call}
}

// callsInto sums one sample type's growth from old (nil: from nothing) to new by the program's
// function and line that called into a library in a way match accepts (it sees the library's
// frames below the program's, the called function last; of a sample's calls, the innermost
// match counts).
func callsInto(ev *evidence.Evidence, old *Snapshot, new Snapshot, typ string, match func(lib []string) bool) map[string]*funcCalls {
	out := map[string]*funcCalls{}
	add := func(sign int64) func([]Site, int64) {
		return func(frames []Site, v int64) {
			eachCall(ev.Program, frames, func(at Site, lib []string) bool {
				if !match(lib) {
					return false
				}
				f, ok := out[at.Function]
				if !ok {
					f = &funcCalls{lines: map[int64]*lineCalls{}}
					out[at.Function] = f
				}
				l, ok := f.lines[at.Line]
				if !ok {
					l = &lineCalls{site: at, call: lib[len(lib)-1]}
					f.lines[at.Line] = l
				}
				l.delta += sign * v
				if sign > 0 && (l.stack == nil || v > l.heavy) {
					l.heavy, l.stack = v, names(frames)
				}
				return true
			})
		}
	}
	if old != nil && ev.EachFrames(*old, typ, add(-1)) != nil || ev.EachFrames(new, typ, add(1)) != nil {
		return nil
	}
	return out
}

// names are the frames' functions.
func names(frames []Site) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.Function
	}
	return out
}

// inScopes reports a frame of one of scopes among frames: a package path matches its
// functions, a receiver type (ending in a dot) its methods, a path ending in "/..." the
// functions of every package under it.
func inScopes(frames []string, scopes []string) bool {
	for _, fr := range frames {
		pkg := evidence.PackagePath(fr)
		for _, sc := range scopes {
			switch {
			case strings.HasSuffix(sc, "/..."):
				if root := sc[:len(sc)-4]; pkg == root || strings.HasPrefix(pkg, root+"/") {
					return true
				}
			case strings.HasSuffix(sc, "."):
				if strings.HasPrefix(fr, sc) {
					return true
				}
			case pkg == sc:
				return true
			}
		}
	}
	return false
}
func appendAll(list, more []string) []string {
	for _, s := range more {
		list = appendNew(list, s)
	}
	return list
}
