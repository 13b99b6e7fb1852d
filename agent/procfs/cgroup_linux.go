//go:build linux

package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Cgroup finds the memory cgroup of pid and reads its usage, statistics and
// effective limit.
//
// /proc/PID/cgroup names the cgroup paths; /proc/PID/mountinfo says where
// each hierarchy is mounted (as pid sees it, so this works from inside a
// container) and which cgroup path sits at the mount's root. The v1 memory
// hierarchy is preferred when mounted: on a hybrid host the v2 unified mount
// has no memory controller. A path that is not below the mount's root, or
// whose directory does not exist (a container that sees its own cgroup at
// the root of the mount while /proc/PID/cgroup names the host's long path),
// maps to the mount point itself. The limit is looked for in every directory
// from the cgroup up to the mount point: a parent's smaller limit applies.
//
// A process in another mount namespace (a container, seen from the host) is
// read through /proc/PID/root, as it mounts its cgroups; Dir then starts
// with /proc/PID/root. That needs root, like any look into another user's
// process.
//
// When the cgroup has no usage file (the root cgroup, or a v2 cgroup whose
// parent does not enable the memory controller) the error wraps
// fs.ErrNotExist and the returned Cgroup still has what was found.
func (fsys FS) Cgroup(pid int) (Cgroup, error) {
	if err := checkPID(pid); err != nil {
		return Cgroup{}, err
	}
	// base is where pid's mount points are: the root, or pid's own view of
	// the filesystem when it lives in another mount namespace.
	base := fsys.root() + fsys.viewPrefix(pid)
	cg, mount, err := fsys.findCgroup(pid, base)
	if err != nil {
		return Cgroup{}, err
	}
	point := strings.TrimRight(mount.point, "/")
	dir, below := mount.dir(cg.Path)
	cg.Dir = base + dir
	if below && dir != point {
		var pb [pathMax]byte
		if !isDir(joinPath(pb[:0], cg.Dir)) {
			cg.Dir = cg.Dir[:len(base)+len(point)]
		}
	}
	cg.Mount = cg.Dir[:len(base)+len(point)] // the walk for limits stops here
	if err := fill(&cg); err != nil {
		return cg, fmt.Errorf("procfs: cgroup of pid %d: %w", pid, err)
	}
	return cg, nil
}

// Reread reads a cgroup that Cgroup found again, from its directory: after its process has
// ended (an OOM kill), the cgroup can still say so (OOMKills), while /proc/PID is gone.
func (FS) Reread(cg Cgroup) (Cgroup, error) {
	if cg.Dir == "" || cg.Mount == "" || cg.Version != 1 && cg.Version != 2 {
		return Cgroup{}, fmt.Errorf("procfs: reread a cgroup: no directory, mount point or version (%q, %q, v%d)", cg.Dir, cg.Mount, cg.Version)
	}
	again := Cgroup{Version: cg.Version, Path: cg.Path, Dir: cg.Dir, Mount: cg.Mount}
	if err := fill(&again); err != nil {
		return again, fmt.Errorf("procfs: cgroup %s: %w", cg.Dir, err)
	}
	return again, nil
}

func fill(cg *Cgroup) error {
	if cg.Version == 1 {
		return fillV1(cg, cg.Mount)
	}
	return fillV2(cg, cg.Mount)
}

// viewPrefix returns "" when pid shares the reader's mount namespace (or
// when that cannot be told: reading another user's ns links needs root),
// else "/proc/PID/root", below which pid's mount points are visible.
//
// /proc/PID/cgroup and the root field of /proc/PID/mountinfo are both
// relative to the reader's cgroup namespace, so they combine correctly
// whichever view the mount points are then opened in. A host reading a
// container's process thus gets the container's own cgroup directory (as
// the container mounts it), not the host's root cgroup.
func (fsys FS) viewPrefix(pid int) string {
	root := fsys.root()
	var sp, pp [pathMax]byte
	var sl, pl [64]byte
	self, err := readlink(joinPath(sp[:0], root, "/proc/self/ns/mnt"), sl[:])
	if err != nil {
		return ""
	}
	theirs, err := readlink(procPath(pp[:0], root, pid, "ns/mnt"), pl[:])
	if err != nil || bytes.Equal(self, theirs) {
		return ""
	}
	return "/proc/" + strconv.Itoa(pid) + "/root"
}

// findCgroup reads /proc/PID/cgroup and /proc/PID/mountinfo and returns the
// version and path of pid's memory cgroup and the mount it is read through;
// base is prepended to mount points.
func (fsys FS) findCgroup(pid int, base string) (Cgroup, cgroupMount, error) {
	root := fsys.root()
	var pc procCgroup
	var pb [pathMax]byte
	err := withFile(procPath(pb[:0], root, pid, "cgroup"), func(b []byte) (err error) {
		pc, err = parseProcCgroup(b)
		return err
	})
	if err != nil {
		return Cgroup{}, cgroupMount{}, fmt.Errorf("procfs: %w", err)
	}
	v1 := mountPicker{path: pc.v1Path}
	v2 := mountPicker{path: pc.v2Path}
	err = eachLine(procPath(pb[:0], root, pid, "mountinfo"), func(line []byte) bool {
		m, err := parseMountinfoLine(line)
		if err != nil {
			return true // the kernel writes these lines; skip anything unexpected
		}
		switch {
		case pc.hasV1 && string(m.FSType) == "cgroup" && hasListItem(m.SuperOpts, "memory"):
			v1.consider(cgroupMount{root: unescapeOctal(m.Root), point: unescapeOctal(m.Point)})
		case pc.hasV2 && string(m.FSType) == "cgroup2":
			v2.consider(cgroupMount{root: unescapeOctal(m.Root), point: unescapeOctal(m.Point)})
		}
		return true
	})
	if err != nil {
		return Cgroup{}, cgroupMount{}, fmt.Errorf("procfs: %w", err)
	}
	if v1.found {
		return Cgroup{Version: 1, Path: pc.v1Path}, v1.best, nil
	}
	why := "pid is in no v1 memory cgroup nor v2 cgroup"
	switch {
	case pc.hasV1:
		why = "no cgroup v1 memory hierarchy is mounted"
	case pc.hasV2 && !v2.found:
		why = "no cgroup2 filesystem is mounted"
	case pc.hasV2:
		ctrl := base + strings.TrimRight(v2.best.point, "/") + "/cgroup.controllers"
		has, err := hasController(ctrl, "memory")
		if err != nil {
			return Cgroup{}, cgroupMount{}, fmt.Errorf("procfs: cgroup of pid %d: %w", pid, err)
		}
		if has {
			return Cgroup{Version: 2, Path: pc.v2Path}, v2.best, nil
		}
		why = "the memory controller is not enabled in cgroup v2 (" + ctrl + ")"
	}
	return Cgroup{}, cgroupMount{}, fmt.Errorf("procfs: cgroup of pid %d: %w: %s", pid, ErrNoMemoryCgroup, why)
}

// hasController reports whether a v2 cgroup.controllers file lists ctrl.
func hasController(path, ctrl string) (bool, error) {
	var pb [pathMax]byte
	var has bool
	err := withFile(joinPath(pb[:0], path), func(b []byte) error {
		for f, rest := nextField(b); len(f) > 0; f, rest = nextField(rest) {
			has = has || string(f) == ctrl
		}
		return nil
	})
	return has, err
}

// withCgFile calls fn with the contents of dir/name; found is false (and err
// nil) when the file does not exist.
func withCgFile(dir, name string, fn func([]byte) error) (found bool, err error) {
	var pb [pathMax]byte
	err = withFile(joinPath(pb[:0], dir, "/", name), fn)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// cgValue reads a one-number file; 0 when absent.
func cgValue(dir, name string) (v uint64, found bool, err error) {
	found, err = withCgFile(dir, name, func(b []byte) (err error) {
		v, err = parseValue(b)
		return err
	})
	return v, found, err
}

// walkLimits reads the limit file name in dir and each parent up to top and
// returns the smallest limit (0 = none) and where it is set. If want is not
// 0, wantDir is the deepest directory whose own limit equals want.
func walkLimits(dir, top, name string, want uint64) (limit uint64, limitDir, wantDir string, err error) {
	for d := dir; ; {
		var l uint64
		_, err := withCgFile(d, name, func(b []byte) (err error) {
			l, err = parseLimit(b)
			return err
		})
		if err != nil {
			return 0, "", "", err
		}
		if l != 0 && (limit == 0 || l < limit) {
			limit, limitDir = l, d
		}
		if want != 0 && l == want && wantDir == "" {
			wantDir = d
		}
		i := strings.LastIndexByte(d, '/')
		if len(d) <= len(top) || i < len(top) {
			return limit, limitDir, wantDir, nil
		}
		d = d[:i]
	}
}

func workingSet(usage, inactiveFile uint64) uint64 {
	if usage < inactiveFile {
		return 0
	}
	return usage - inactiveFile
}
