package procfs

import "strings"

// cgroupMount is a mounted cgroup hierarchy: the cgroup path that appears at
// the mount (its mountinfo root) and where it is mounted.
type cgroupMount struct{ root, point string }

// relPath returns path relative to the mount's root ("" for the root itself,
// else "/a/b"); ok is false when path is not below root, or climbs with "..",
// as paths of processes outside the reader's cgroup namespace do.
func (m cgroupMount) relPath(path string) (rel string, ok bool) {
	if hasDotDot(path) {
		return "", false
	}
	path = strings.TrimRight(path, "/")
	root := strings.TrimRight(m.root, "/")
	switch {
	case path == root:
		return "", true
	case strings.HasPrefix(path, root) && path[len(root)] == '/':
		return path[len(root):], true
	}
	return "", false
}

// dir maps a cgroup path to its directory in the mounted hierarchy (without
// the FS root). When the path is not below the mount's root (a container may
// see only its own cgroup mounted while /proc/PID/cgroup names another
// path), it falls back to the mount point itself and below is false.
func (m cgroupMount) dir(path string) (dir string, below bool) {
	point := strings.TrimRight(m.point, "/")
	rel, ok := m.relPath(path)
	if !ok {
		return point, false
	}
	return point + rel, true
}

// hasDotDot reports whether path has a ".." element.
func hasDotDot(path string) bool {
	for path != "" {
		var el string
		el, path, _ = strings.Cut(path, "/")
		if el == ".." {
			return true
		}
	}
	return false
}

// mountPicker picks, among the mounts of one hierarchy (a host or container
// can mount it more than once, at different roots), the one to read a cgroup
// path from: a mount whose root contains the path beats one that does not,
// and the longest such root wins; otherwise the first mount seen.
type mountPicker struct {
	path  string
	best  cgroupMount
	found bool
	below bool
}

func (p *mountPicker) consider(m cgroupMount) {
	_, below := m.relPath(p.path)
	switch {
	case !p.found,
		below && !p.below,
		below && p.below && len(m.root) > len(p.best.root):
		p.best, p.found, p.below = m, true, below
	}
}
