//go:build linux

package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"time"
)

// Descendants returns pid's live descendants (not pid itself), parents before
// children, using /proc/PID/task/*/children when present and falling back to
// scanning every /proc/N/stat for PPID.
//
// The kernel lists a child under the thread that created it, so every thread's
// children file is read. Zombies that their parent has not reaped yet are
// included (they still exist; their Status has no memory lines). The result is
// a snapshot: processes can exit or fork while it is taken.
func (fsys FS) Descendants(pid int) ([]int, error) {
	if err := checkPID(pid); err != nil {
		return nil, err
	}
	root := fsys.root()
	var pb [pathMax]byte
	dir := procPath(pb[:0], root, pid, "")
	if !isDir(dir) {
		return nil, fmt.Errorf("procfs: descendants of pid %d: %w", pid, pathError("open", dir, fs.ErrNotExist))
	}
	var cb [pathMax]byte
	if isFile(taskPath(cb[:0], root, pid, pid, "children")) {
		return fsys.descendantsByChildren(pid)
	}
	return fsys.descendantsByScan(pid)
}

// taskPath appends root/proc/PID/task/TID/name and a NUL to dst.
func taskPath(dst []byte, root string, pid, tid int, name string) []byte {
	dst = append(dst, root...)
	dst = append(dst, "/proc/"...)
	dst = strconv.AppendInt(dst, int64(pid), 10)
	dst = append(dst, "/task/"...)
	dst = strconv.AppendInt(dst, int64(tid), 10)
	dst = append(dst, '/')
	dst = append(dst, name...)
	return append(dst, 0)
}

func isFile(path []byte) bool {
	return withFile(path, func([]byte) error { return nil }) == nil
}

// descendantsByChildren walks the tree breadth first through the children
// files of every thread. Siblings are sorted by PID, as in descendantsByScan.
func (fsys FS) descendantsByChildren(pid int) ([]int, error) {
	root := fsys.root()
	seen := map[int]bool{pid: true}
	var out, kids []int
	for i, parent := 0, pid; ; i++ {
		kids = kids[:0]
		var pb [pathMax]byte
		err := eachDirInt(procPath(pb[:0], root, parent, "task"), func(tid int) bool {
			var cb [pathMax]byte
			// A thread or process that exited meanwhile has no children to list.
			_ = withFile(taskPath(cb[:0], root, parent, tid, "children"), func(b []byte) error {
				for f, rest := nextField(b); len(f) > 0; f, rest = nextField(rest) {
					if c, ok := parseInt(f); ok && c > 0 {
						kids = append(kids, c)
					}
				}
				return nil
			})
			return true
		})
		if err != nil && (parent == pid || !errors.Is(err, fs.ErrNotExist)) {
			return nil, fmt.Errorf("procfs: descendants of pid %d: %w", pid, err)
		}
		slices.Sort(kids)
		for _, c := range kids {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		if i == len(out) {
			return out, nil
		}
		parent = out[i]
	}
}

// descendantsByScan reads the PPID of every process (kernels built without
// CONFIG_PROC_CHILDREN) and walks the resulting tree breadth first.
func (fsys FS) descendantsByScan(pid int) ([]int, error) {
	root := fsys.root()
	children := map[int][]int{}
	var pb [pathMax]byte
	err := eachDirInt(joinPath(pb[:0], root, "/proc"), func(n int) bool {
		var sb [pathMax]byte
		var ppid int
		err := withFile(procPath(sb[:0], root, n, "stat"), func(b []byte) error {
			st, err := parseStat(b, time.Time{})
			ppid = st.PPID
			return err
		})
		if err == nil && n != ppid {
			children[ppid] = append(children[ppid], n)
		}
		return true // processes that exit or cannot be read are skipped
	})
	if err != nil {
		return nil, fmt.Errorf("procfs: descendants of pid %d: %w", pid, err)
	}
	seen := map[int]bool{pid: true}
	var out []int
	for i, parent := 0, pid; ; i++ {
		kids := children[parent]
		slices.Sort(kids)
		for _, c := range kids {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		if i == len(out) {
			return out, nil
		}
		parent = out[i]
	}
}
