package leaktest

import (
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// modules knows the test binary's modules, to tell the program's own code (the main module:
// the module under test) from its dependencies and the standard library.
type modules struct {
	main string
	deps []string // module paths, longest first
}

func readModules() modules {
	var m modules
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return m
	}
	m.main = bi.Main.Path
	for _, d := range bi.Deps {
		m.deps = append(m.deps, d.Path)
	}
	if m.main != "" {
		m.deps = append(m.deps, m.main)
	}
	slices.SortFunc(m.deps, func(a, b string) int { return len(b) - len(a) })
	return m
}

// packagePath is the package of a function as a stack prints it:
// "github.com/acme/x.(*T).M" is in "github.com/acme/x".
func packagePath(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return fn[:slash+1+dot]
}

type class int

const (
	classRuntime class = iota // the Go runtime
	classStd                  // the rest of the standard library
	classDep                  // a dependency: a library
	classMain                 // the program's own code: the main module, package main, a test
)

func (m modules) classify(fn string) class {
	pkg := packagePath(fn)
	switch {
	case pkg == "main" || pkg == "command-line-arguments" || m.inMain(pkg):
		return classMain
	case pkg == "runtime" || strings.HasPrefix(pkg, "runtime/internal") || strings.HasPrefix(pkg, "internal/runtime") || pkg == "":
		return classRuntime
	case !strings.Contains(strings.Split(pkg, "/")[0], "."):
		return classStd
	}
	return classDep
}

func (m modules) inMain(pkg string) bool {
	if m.main == "" {
		return false
	}
	return pkg == m.main || strings.HasPrefix(pkg, m.main+"/") || strings.HasPrefix(pkg, m.main+"_test")
}

// module is the module a package belongs to: the longest module of the build whose path is
// a prefix of it, else its first three path elements (host/owner/repo).
func (m modules) module(pkg string) string {
	for _, d := range m.deps {
		if pkg == d || strings.HasPrefix(pkg, d+"/") {
			return d
		}
	}
	elems := strings.Split(pkg, "/")
	return strings.Join(elems[:min(3, len(elems))], "/")
}

// site is where a stack's allocation (or goroutine) comes from, as a person fixing it reads
// it: the program's line (the innermost frame of the program's own code, the line the user
// changes, as memdoctor's diagnosis names culprits), and the library's line under it (the
// innermost frame in the module the program called into), or the standard library's
// allocating line when the program called no library.
type site struct {
	program frame
	// inFn is false when no frame of the program's own code is leafward of Loop: fn was a
	// library's function, and program is the line that called Loop.
	inFn bool
	lib  frame // zero when the program allocated itself
	// elsewhere is set for a stack that does not come from fn's calls: another goroutine's
	// (one fn started, or a server's), or the runtime's own (each new goroutine's record).
	elsewhere string
}

// attributor attributes stacks to sites.
type attributor struct {
	mods modules
	// boundary is the function that calls fn: frames rootward of it are Loop's and the test's.
	boundary string
	// testBoundaries, for CheckTest, are the other functions that run fn's code: the one that
	// runs the test on its own goroutine, then testing's, which runs each of its subtests on
	// theirs.
	testBoundaries []string
	loopCall       frame
}

// frames returns a stack's frames, innermost first, cut at the boundary, and whether it
// reached the boundary: whether fn's calls made it. A stack the profile cut at its 32 frames
// before the boundary is taken as fn's too: deep call chains are fn's, in a test.
func (a *attributor) frames(stk []uintptr) (out []frame, fromFn bool) {
	fs := runtime.CallersFrames(stk)
	for {
		f, more := fs.Next()
		if f.Function == a.boundary || len(a.testBoundaries) > 0 && slices.Contains(a.testBoundaries, f.Function) {
			return out, true
		}
		out = append(out, frame{fn: f.Function, file: f.File, line: f.Line})
		if !more {
			return out, len(stk) == profileDepth
		}
	}
}

// profileDepth is how many frames runtime.MemProfile keeps of a stack.
const profileDepth = len(runtime.MemProfileRecord{}.Stack0)

// attribute finds the sites of a stack (innermost frame first, cut at the boundary; fromFn
// when it reached it).
func (a *attributor) attribute(fr []frame, fromFn bool) site {
	if !fromFn {
		return a.elsewhere(fr)
	}
	p := -1
	for i, f := range fr {
		if a.mods.classify(f.fn) == classMain {
			p = i
			break
		}
	}
	s := site{program: a.loopCall}
	region := fr
	if p >= 0 {
		s.program, s.inFn, region = fr[p], true, fr[:p]
	}
	// The library the program called: the outermost dependency frame under the program's.
	api := -1
	for i := len(region) - 1; i >= 0; i-- {
		if a.mods.classify(region[i].fn) == classDep {
			api = i
			break
		}
	}
	if api >= 0 {
		mod := a.mods.module(packagePath(region[api].fn))
		for _, f := range region {
			if a.mods.classify(f.fn) == classDep && a.mods.module(packagePath(f.fn)) == mod {
				s.lib = f
				break
			}
		}
		return s
	}
	for _, f := range region {
		if a.mods.classify(f.fn) != classRuntime {
			s.lib = f
			break
		}
	}
	return s
}

// elsewhere attributes a stack that does not come from fn's calls: to the innermost frame of
// the program, else of a library, else to the runtime.
func (a *attributor) elsewhere(fr []frame) site {
	for _, c := range []class{classMain, classDep, classStd} {
		for _, f := range fr {
			if a.mods.classify(f.fn) == c {
				s := site{program: f, inFn: c == classMain, elsewhere: "another goroutine"}
				if c != classMain {
					s.lib = f
					s.program = frame{fn: "another goroutine"}
				}
				return s
			}
		}
	}
	return site{program: frame{fn: "runtime"}, elsewhere: "the runtime"}
}
