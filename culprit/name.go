package culprit

import "strings"

// PackagePath returns the import path of the package that defines function,
// a fully qualified Go function name as found in profiles and tracebacks:
//
//	"github.com/a/b.(*T).M"          -> "github.com/a/b"
//	"main.main"                      -> "main"
//	"gopkg.in/yaml%2ev3.Unmarshal"   -> "gopkg.in/yaml.v3"
//	"gopkg.in/yaml.v3.(*parser).fail" -> "gopkg.in/yaml.v3"
//	"pkg.F[go.shape.int]"            -> "pkg"
//
// It returns "" when the name has no package qualifier (C symbols,
// unsymbolized addresses). Generic type arguments are ignored, and the linker's
// "%2e" escape of dots in the last path element is undone. An unescaped dot in
// the last path element is ambiguous with a type or method name; only the
// gopkg.in ".vN" convention is recognised there.
func PackagePath(function string) string {
	end := pkgEnd(function)
	if end < 0 {
		return ""
	}
	pkg := function[:end]
	if strings.Contains(pkg, "%") {
		pkg = strings.ReplaceAll(pkg, "%2e", ".")
	}
	return pkg
}

// pkgEnd returns the index of the dot that ends the package path in function,
// or -1 when the name has no package qualifier.
func pkgEnd(function string) int {
	// Package paths never contain '[' (generic arguments) or '(' (pointer
	// receivers); everything from there on is the symbol within the package.
	s := function
	if i := strings.IndexAny(s, "[("); i >= 0 {
		s = s[:i]
	}
	slash := strings.LastIndexByte(s, '/')
	dot := strings.IndexByte(s[slash+1:], '.')
	if dot <= 0 {
		return -1
	}
	end := slash + 1 + dot
	if strings.HasPrefix(s, "gopkg.in/") {
		end += versionSuffixLen(s[end:])
	}
	return end
}

// versionSuffixLen returns the length of a leading ".vN" in rest when it is
// followed by a dot, as in the unescaped gopkg.in form "gopkg.in/yaml.v3.F".
func versionSuffixLen(rest string) int {
	if len(rest) < 4 || rest[0] != '.' || rest[1] != 'v' {
		return 0
	}
	i := 2
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 2 || i >= len(rest) || rest[i] != '.' {
		return 0
	}
	return i
}

// IsStdlib reports whether function belongs to the Go runtime or the standard
// library: its package path's first element has no dot (runtime, io,
// encoding/json, net/http, internal/..., vendor/golang.org/x/...). Package main
// (and "command-line-arguments", the package of `go run file.go`) is the
// program's own code, not the standard library. A name without a package
// qualifier (a C symbol or an unsymbolized address) is not standard library.
//
// A module path without a dot ("go mod init myapp") looks like the standard
// library to this rule; pass Options.MainModule to attribute such code.
func IsStdlib(function string) bool {
	return isStdPkg(PackagePath(function))
}

func isStdPkg(pkg string) bool {
	if pkg == "" || pkg == "main" || pkg == "command-line-arguments" || strings.HasPrefix(pkg, "_/") {
		return false
	}
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// isRuntimePkg reports whether pkg is part of the Go runtime proper.
func isRuntimePkg(pkg string) bool {
	return pkg == "runtime" ||
		strings.HasPrefix(pkg, "runtime/internal/") ||
		pkg == "runtime/cgo" ||
		strings.HasPrefix(pkg, "internal/runtime/")
}

// isRuntimeFunc reports whether function is runtime code: in a runtime package,
// or a runtime implementation linknamed into another package, such as
// "internal/poll.runtime_pollWait" or "sync.runtime_SemacquireMutex".
func isRuntimeFunc(function, pkg string) bool {
	if isRuntimePkg(pkg) {
		return true
	}
	end := pkgEnd(function)
	return end >= 0 && strings.HasPrefix(function[end:], ".runtime_")
}

// normalizeFunc replaces generic type arguments with "[...]", as the Go
// runtime has printed them since Go 1.21: "pkg.F[go.shape.int]" and
// "pkg.F[...]" name the same function, whichever Go version wrote the
// profile.
func normalizeFunc(name string) string {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return name
	}
	j := strings.LastIndexByte(name, ']')
	if j <= i || name[i:j+1] == "[...]" {
		return name
	}
	return name[:i] + "[...]" + name[j+1:]
}

// allocPlumbing reports whether a runtime function only allocates on its caller's behalf
// (runtime.mallocgc and its variants, new, make, append's growslice, map assignment and
// the map's internals, string and interface conversions, the switch to the system stack):
// naming it says nothing of what the memory is for, its caller does.
func allocPlumbing(function string) bool {
	if strings.HasPrefix(function, "internal/runtime/maps.") {
		return true
	}
	name, ok := strings.CutPrefix(function, "runtime.")
	if !ok {
		return false
	}
	for _, p := range allocPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// allocPrefixes are the names (after "runtime.") of the runtime's allocation plumbing.
var allocPrefixes = []string{
	"mallocgc", "newobject", "newarray", "makeslice", "growslice", "makemap", "mapassign",
	"makechan", "rawstring", "rawbyteslice", "rawruneslice", "concatstring", "slicebytetostring",
	"stringtoslice", "intstring", "convT", "systemstack", "mcall", "persistentalloc",
}
