package culprit

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Options tunes attribution.
type Options struct {
	// MainModule is the main module's path, e.g. "github.com/acme/svc";
	// "" when unknown. Frames in this module win over third-party frames,
	// and a module path without a dot ("myapp") is recognised as the
	// program's own code rather than the standard library.
	MainModule string
}

// Site is one attribution target.
type Site struct {
	Function string `json:"function"` // e.g. "main.handleUpload"
	File     string `json:"file,omitempty"`
	Line     int64  `json:"line,omitempty"`
	Own      bool   `json:"own"` // the frame is outside runtime+stdlib
}

// unknownFunction names the site of a sample that has no stack.
const unknownFunction = "(unknown)"

// frame is one logical frame (inlined calls are frames of their own).
type frame struct {
	fn   string // normalized function name
	file string
	line int64
}

// frameClass orders frames by how well they serve as a culprit.
type frameClass uint8

const (
	classMarker     frameClass = iota // not a function: "...frames elided..."
	classUnknown                      // no Go package: C symbol, raw address
	classAlloc                        // the runtime's allocation plumbing (mallocgc, growslice, ...)
	classRuntime                      // the rest of the Go runtime
	classStd                          // the rest of the standard library
	classThirdParty                   // outside the standard library
	classMain                         // package main or the main module
)

func classify(fn string, opts Options) frameClass {
	pkg := PackagePath(fn)
	switch {
	case pkg == "":
		return classUnknown
	case pkg == "main" || pkg == "command-line-arguments" || inModule(fn, opts.MainModule):
		return classMain
	case isRuntimeFunc(fn, pkg):
		if allocPlumbing(fn) {
			return classAlloc
		}
		return classRuntime
	case isStdPkg(pkg):
		return classStd
	}
	return classThirdParty
}

// inModule reports whether function is defined in module mod or one of its
// packages.
func inModule(function, mod string) bool {
	if mod == "" {
		return false
	}
	if strings.Contains(function, "%2e") {
		function = strings.ReplaceAll(function, "%2e", ".")
	}
	if len(function) <= len(mod) || !strings.HasPrefix(function, mod) {
		return false
	}
	c := function[len(mod)]
	return c == '.' || c == '/'
}

// Attribute picks the culprit site of one stack. loc is as in
// profile.Sample.Location (leaf first); the lines of a location with inlined
// calls (innermost first) count as frames of their own. stack lists every
// frame's function, leaf first.
func Attribute(loc []*profile.Location, opts Options) (site Site, stack []string) {
	frames := appendFrames(nil, loc)
	return attributeFrames(frames, opts), frameNames(frames)
}

// attributeFrames applies the attribution rule to frames (leaf first).
func attributeFrames(frames []frame, opts Options) Site {
	i, own := pickSite(len(frames), opts.MainModule != "", func(i int) frameClass {
		return classOf(frames[i].fn, opts)
	})
	if i < 0 {
		return Site{Function: unknownFunction}
	}
	return siteOf(frames[i], own)
}

// classOf is classify, with markers that stand for no function (elided
// frames) set apart.
func classOf(fn string, opts Options) frameClass {
	if fn == elidedFrame {
		return classMarker
	}
	return classify(fn, opts)
}

// pickSite applies the attribution rule to n frames (leaf first) of the given
// classes: the innermost main-module frame when the main module is known,
// else the innermost non-stdlib frame; failing both, the innermost
// non-runtime frame; failing that (a stack of the runtime alone, as a goroutine's g
// allocated on the system stack is) the innermost runtime frame past the allocation
// plumbing (runtime.malg, not runtime.mallocgc), and only then the leaf (own=false). It
// returns -1 when there are no frames.
func pickSite(n int, mainKnown bool, class func(int) frameClass) (idx int, own bool) {
	first, fallback, rt := -1, -1, -1
	for i := range n {
		switch class(i) {
		case classRuntime:
			if rt < 0 {
				rt = i
			}
		case classMain:
			return i, true
		case classThirdParty:
			if !mainKnown {
				return i, true
			}
			if first < 0 {
				first = i
			}
		case classStd, classUnknown:
			if fallback < 0 {
				fallback = i
			}
		}
	}
	switch {
	case first >= 0:
		return first, true
	case fallback >= 0:
		return fallback, false
	case rt >= 0:
		return rt, false
	}
	return min(n-1, 0), false
}

func siteOf(f frame, own bool) Site {
	return Site{Function: f.fn, File: f.file, Line: f.line, Own: own}
}

// appendFrames appends the logical frames of locs (leaf first) to dst. A
// location without symbol information becomes a frame named by its address.
func appendFrames(dst []frame, locs []*profile.Location) []frame {
	for _, l := range locs {
		if l == nil {
			continue
		}
		if len(l.Line) == 0 {
			dst = append(dst, frame{fn: addrName(l.Address)})
			continue
		}
		for _, ln := range l.Line {
			f := frame{line: ln.Line}
			if ln.Function != nil {
				f.fn = normalizeFunc(ln.Function.Name)
				f.file = ln.Function.Filename
			}
			if f.fn == "" {
				f.fn = addrName(l.Address)
			}
			dst = append(dst, f)
		}
	}
	return dst
}

func addrName(addr uint64) string {
	return "0x" + strconv.FormatUint(addr, 16)
}

func frameNames(frames []frame) []string {
	names := make([]string, len(frames))
	for i, f := range frames {
		names[i] = f.fn
	}
	return names
}

// Frames are the logical frames of a stack (loc as in profile.Sample.Location, leaf first;
// inlined calls are frames of their own), each with its function, file and line; Own is not
// set.
func Frames(loc []*profile.Location) []Site {
	frames := appendFrames(nil, loc)
	out := make([]Site, len(frames))
	for i, f := range frames {
		out[i] = Site{Function: f.fn, File: f.file, Line: f.line}
	}
	return out
}

// AttributeNames picks the culprit site of a stack given as function names (leaf first, one
// per logical frame), as Attribute does for a profile's locations: for stacks read from
// somewhere other than a profile (a process's memory).
func AttributeNames(names []string, opts Options) Site {
	frames := make([]frame, 0, len(names))
	for _, n := range names {
		frames = append(frames, frame{fn: normalizeFunc(n)})
	}
	return attributeFrames(frames, opts)
}

// Program reports whether function is the program's own code: in the main module (or package
// main) when the main module is known, else anywhere outside the runtime and the standard
// library.
func Program(function string, opts Options) bool {
	switch classify(normalizeFunc(function), opts) {
	case classMain:
		return true
	case classThirdParty:
		return opts.MainModule == ""
	}
	return false
}

// StartFunction is a goroutine's start function: the root-most frame of its stack (leaf
// first) that is not the runtime's; "" when there is none.
func StartFunction(stack []string) string {
	for i := len(stack) - 1; i >= 0; i-- {
		fn := stack[i]
		if fn == elidedFrame || fn == goexitFunc {
			continue
		}
		if pkg := PackagePath(fn); pkg != "" && !isRuntimeFunc(fn, pkg) {
			return fn
		}
	}
	return ""
}

// IsRuntime reports whether function is the Go runtime's (runtime_ functions linknamed into
// other packages included).
func IsRuntime(function string) bool { return isRuntimeFunc(function, PackagePath(function)) }
