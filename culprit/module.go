package culprit

import (
	"strings"

	"github.com/google/pprof/profile"
)

// MainModule infers the program's main module path from a profile, for profiles that come
// without their binary's build info: the packages outside the standard library whose
// source files are neither in a module cache ("...@v1.2.3/...") nor vendored
// (".../vendor/...") are the main module's (a dependency's files always sit in one or the
// other, with -trimpath or without), and the module path is their longest common prefix.
// When those packages have no common prefix (a workspace, or a dependency replaced by a
// local directory), it is the prefix of the largest group of them. It returns "" when the
// profile has no such package (only the standard library and dependencies, or no file
// names at all): attribution then takes the innermost frame outside the standard library.
func MainModule(p *profile.Profile) string {
	if p == nil {
		return ""
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, fn := range p.Function {
		if fn == nil || fn.Filename == "" || dependencyFile(fn.Filename) {
			continue
		}
		pkg := PackagePath(normalizeFunc(fn.Name))
		if pkg == "" || pkg == "main" || pkg == "command-line-arguments" || isStdPkg(pkg) || seen[pkg] {
			continue
		}
		seen[pkg] = true
		pkgs = append(pkgs, pkg)
		if len(pkgs) == maxModulePackages {
			break
		}
	}
	return modulePrefix(pkgs)
}

// maxModulePackages bounds the packages MainModule looks at.
const maxModulePackages = 4096

// dependencyFile reports a source file of a dependency: in a module cache (a module
// version in its path) or a vendor directory.
func dependencyFile(file string) bool {
	file = strings.ReplaceAll(file, `\`, "/")
	return strings.Contains(file, "@v") || strings.HasPrefix(file, "vendor/") || strings.Contains(file, "/vendor/") ||
		strings.Contains(file, "/pkg/mod/")
}

// modulePrefix is the longest common prefix (by path element) of pkgs, or when that is too
// short to name a module, the prefix of the largest group of them sharing a module root.
func modulePrefix(pkgs []string) string {
	if len(pkgs) == 0 {
		return ""
	}
	if p := commonPrefix(pkgs); moduleLike(p) {
		return p
	}
	groups := map[string][]string{}
	best := ""
	for _, pkg := range pkgs {
		r := moduleRoot(pkg)
		groups[r] = append(groups[r], pkg)
		if b := groups[best]; best == "" || len(groups[r]) > len(b) || len(groups[r]) == len(b) && r < best {
			best = r
		}
	}
	if p := commonPrefix(groups[best]); moduleLike(p) {
		return p
	}
	return ""
}

// commonPrefix is the longest common prefix of the paths, by whole path elements.
func commonPrefix(paths []string) string {
	prefix := strings.Split(paths[0], "/")
	for _, p := range paths[1:] {
		elems := strings.Split(p, "/")
		n := 0
		for n < len(prefix) && n < len(elems) && prefix[n] == elems[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return strings.Join(prefix, "/")
}

// ModuleRoot is the shortest path the module of a package outside the standard library
// could have (host/owner/repo on the hosts whose paths have that shape: the packages of one
// library, its internal ones too, share it); a standard library package's is the package
// itself.
func ModuleRoot(pkg string) string {
	if pkg == "" || isStdPkg(pkg) {
		return pkg
	}
	return moduleRoot(pkg)
}

// moduleRoot is the shortest path a module of pkg could have: host/owner/repo for the
// hosts whose paths have that shape, host/name for other hosts, else the first element.
func moduleRoot(pkg string) string {
	elems := strings.Split(pkg, "/")
	return strings.Join(elems[:min(rootElems(elems[0]), len(elems))], "/")
}

// rootElems is how many path elements a module path on host has at least.
func rootElems(host string) int {
	switch host {
	case "github.com", "gitlab.com", "bitbucket.org", "codeberg.org":
		return 3
	}
	if strings.Contains(host, ".") {
		return 2
	}
	return 1
}

// moduleLike reports whether p can be a module path: not empty, and as long as a module
// path on its host must be (a bare "github.com" is not a module).
func moduleLike(p string) bool {
	if p == "" {
		return false
	}
	elems := strings.Split(p, "/")
	return len(elems) >= rootElems(elems[0])
}
