package recorder

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
)

// toolchain names processes that build or wrap the target rather than being it: `memdoctor
// run -- go run ./cmd/server` must measure the server, not the go command or the compiler.
var toolchain = map[string]bool{
	"go": true, "compile": true, "link": true, "asm": true, "cgo": true, "vet": true,
	"cover": true, "buildid": true, "gcc": true, "cc": true, "cc1": true, "clang": true,
	"collect2": true, "ld": true, "as": true, "dlv": true,
}

// procInfo is what memdoctor knows about one process of the tree.
type procInfo struct {
	PID        int
	Name       string
	Exe        string
	Start      time.Time
	Depth      int
	GoVersion  string // "" when the binary has no Go build info
	MainModule string
	Toolchain  bool
}

// errExecuting says a process is between the two halves of an exec: its new memory has no
// arguments or environment yet, or it still runs in its parent's memory (a vfork child), so
// what /proc says of it is not yet what it will run.
var errExecuting = errors.New("the process has not finished exec")

// inspect reads what the target needs from a process. A process whose exec has not finished
// (no arguments yet) is an error: read then, its environment would be empty and its
// executable its parent's, and a later reading would not correct the cached one.
func inspect(fs procfs.FS, pid, depth int, startOffset time.Duration) (procInfo, error) {
	st, err := fs.Stat(pid)
	if err != nil {
		return procInfo{}, err
	}
	if args, err := fs.Cmdline(pid); err != nil || len(args) == 0 {
		return procInfo{}, errExecuting
	}
	pi := procInfo{PID: pid, Name: st.Comm, Start: st.StartTime.Add(startOffset), Depth: depth}
	if exe, err := fs.Exe(pid); err == nil {
		pi.Exe = exe
		base := filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
		pi.Toolchain = toolchain[base]
		if bi, err := buildinfo.ReadFile(filepath.Join(fs.Root, "/proc", fmt.Sprint(pid), "exe")); err == nil {
			pi.GoVersion = bi.GoVersion
			pi.MainModule = bi.Main.Path
			if pi.MainModule == "" {
				pi.MainModule = bi.Path
			}
		}
	}
	return pi, nil
}

// treeWatcher finds the target in the process tree under a root process.
type treeWatcher struct {
	fs          procfs.FS
	root        int
	startOffset time.Duration // corrects /proc start times (whole-second btime) to the wall clock
	known       map[int]procInfo
}

// newTreeWatcher watches the tree under root, which started after rootStartedAfter (the clock
// read just before its fork). The start times it gives (procInfo.Start) are then at most a
// clock tick (/proc counts them) later than the true ones, and earlier at most by the fork's
// own time: what comes from a process (its gctrace lines, gcTracker) is never dated before it.
func newTreeWatcher(fs procfs.FS, root int, rootStartedAfter time.Time) *treeWatcher {
	w := &treeWatcher{fs: fs, root: root, known: make(map[int]procInfo)}
	if st, err := fs.Stat(root); err == nil {
		w.startOffset = rootStartedAfter.Sub(st.StartTime)
	}
	return w
}

// processes returns the live processes of the tree, root first, with depths.
func (w *treeWatcher) processes() []procInfo {
	pids, err := w.fs.Descendants(w.root)
	if err != nil {
		pids = nil
	}
	pids = append([]int{w.root}, pids...)
	depth := map[int]int{w.root: 0}
	var out []procInfo
	alive := make(map[int]bool, len(pids))
	for _, pid := range pids {
		alive[pid] = true
		pi, ok := w.known[pid]
		if ok && !sameProgram(w.fs, pi) {
			ok = false // it ran exec since: a vfork child of the toolchain became the target
		}
		if !ok {
			d := 0
			if st, err := w.fs.Stat(pid); err == nil {
				d = depth[st.PPID] + 1
			}
			if pid == w.root {
				d = 0
			}
			var err error
			if pi, err = inspect(w.fs, pid, d, w.startOffset); err != nil {
				continue // gone already
			}
			w.known[pid] = pi
		}
		depth[pid] = pi.Depth
		out = append(out, pi)
	}
	for pid := range w.known { // forget the dead: a long build spawns many compilers
		if !alive[pid] {
			delete(w.known, pid)
		}
	}
	return out
}

// sameProgram reports whether pi's process still runs the program it was inspected running:
// exec sets the command name (comm) to the new executable's.
func sameProgram(fs procfs.FS, pi procInfo) bool {
	st, err := fs.Stat(pi.PID)
	return err != nil || st.Comm == pi.Name
}

// pick chooses the target among the tree's processes: the deepest process that is not part of
// the Go toolchain, preferring Go programs; ties go to the larger RSS.
func (w *treeWatcher) pick(ps []procInfo) (procInfo, bool) {
	var best procInfo
	var bestKey []uint64
	for _, p := range ps {
		if p.Toolchain {
			continue
		}
		var isGo, rss uint64
		if p.GoVersion != "" {
			isGo = 1
		}
		if st, err := w.fs.Status(p.PID); err == nil {
			rss = st.VmRSS
		}
		key := []uint64{isGo, uint64(p.Depth), rss}
		if bestKey == nil || slices.Compare(key, bestKey) > 0 {
			best, bestKey = p, key
		}
	}
	return best, bestKey != nil
}
