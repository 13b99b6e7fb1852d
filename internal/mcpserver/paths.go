package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/session"
)

// roots are the directories the server may read, absolute and with symbolic links resolved.
type roots []string

// newRoots resolves the directories given with --root: each must exist and be a directory.
func newRoots(dirs []string) (roots, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no --root: give the directories whose sessions, profiles and logs the server may read")
	}
	var r roots
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", d, unwrapPath(err))
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--root %s: not a directory", d)
		}
		if !slices.Contains(r, real) {
			r = append(r, real)
		}
	}
	return r, nil
}

// resolve returns the real path of p (absolute, or relative to the first root) when it is
// under a root, and an error naming p and the roots otherwise. p must exist: its symbolic
// links are resolved before the check, so none leads out of the roots.
func (r roots) resolve(what, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%s: empty: give a path under %s", what, r)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r[0], p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, p, unwrapPath(err))
	}
	if !r.contains(real) {
		return "", fmt.Errorf("%s %s: outside the directories this server may read (%s): move it there, or start memdoctor mcp with --root on its directory", what, p, r)
	}
	return real, nil
}

// resolveSnapshot is resolve for a diff operand: a profile, or SESSION_DIR@N.
func (r roots) resolveSnapshot(what, p string) (string, error) {
	if dir, n, ok := strings.Cut(p, "@"); ok && n != "" && strings.Trim(n, "-0123456789") == "" {
		if real, err := r.resolve(what, dir); err == nil && isSessionDir(real) {
			return real + "@" + n, nil
		}
	}
	return r.resolve(what, p)
}

// contains reports whether the real path p is a root or under one.
func (r roots) contains(p string) bool {
	for _, root := range r {
		rel, err := filepath.Rel(root, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func (r roots) String() string { return strings.Join(r, ", ") }

// maxSessions bounds how many sessions the resources list.
const maxSessions = 500

// sessions finds the session directories under the roots: a root itself, its children and
// their children (./memdoctor-sessions/NAME), sorted, at most maxSessions.
func (r roots) sessions() []string {
	var out []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if len(out) >= maxSessions {
			return
		}
		if isSessionDir(dir) {
			out = append(out, dir)
			return
		}
		if depth == 2 {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				walk(filepath.Join(dir, e.Name()), depth+1)
			}
		}
	}
	for _, root := range r {
		walk(root, 0)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// isSessionDir reports a memdoctor session directory: its manifest, or its samples when a
// killed collector left no manifest (as memdoctor analyze decides).
func isSessionDir(dir string) bool {
	for _, f := range []string{session.ManifestFile, session.MetricsFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// unwrapPath drops the *fs.PathError wrapper whose path the caller already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
