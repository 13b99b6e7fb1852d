package pprofdir

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/session"
)

// disagree is how far a profile's own time and its file's modification time may differ
// before a note says which was used: saving a profile takes a moment, copying it resets its
// modification time.
const disagree = time.Minute

// labelDelta marks a delta heap profile (?seconds=N): not a periodic snapshot of the heap.
const labelDelta = "delta"

// build turns what was read into the evidence.
func (l *loader) build(opts Options) {
	ev := l.ev
	l.addProfiles()
	l.mainModule(opts.MainModule)
	l.addLogs()
	l.restarts()
	l.target()
	ev.Notes = append(ev.Notes, l.skip.notes()...)
	for _, why := range l.cut {
		ev.Notes = append(ev.Notes, "stopped reading folders at "+why+": what lies beyond was not read")
	}
	l.gaps(opts.MemoryBudgetBytes)
	ev.Finish(evidence.Options{MemoryBudgetBytes: opts.MemoryBudgetBytes})
}

// addProfiles places each profile in time (its own time, else its file's modification
// time) and adds it as a snapshot.
func (l *loader) addProfiles() {
	var noTime, differ int
	var maxDiff time.Duration
	var noTimeWhat []string
	for i := range l.profiles {
		it := &l.profiles[i]
		if it.info.Time.IsZero() {
			noTime++
			if !slices.Contains(noTimeWhat, it.info.What) {
				noTimeWhat = append(noTimeWhat, it.info.What)
			}
			it.info.Time = it.mtime
			continue
		}
		if d := absDur(it.info.Time.Sub(it.mtime)); d > disagree {
			differ++
			maxDiff = max(maxDiff, d)
		}
	}
	slices.SortStableFunc(l.profiles, func(a, b item) int { return a.info.Time.Compare(b.info.Time) })
	ev := l.ev
	var deltas int
	for _, it := range l.profiles {
		s := evidence.Snapshot{Kind: it.info.Kind, T: it.info.Time, Path: it.path}
		if it.info.Window > 0 {
			s.Label = labelDelta
			deltas++
		}
		ev.AddSnapshot(s)
	}
	if noTime > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%d profile(s) carry no time of their own (%s): each is placed at its file's modification time",
			noTime, strings.Join(noTimeWhat, ", ")))
	}
	if differ > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%d profile(s) are placed at the time they carry (TimeNanos); their files' modification times differ from it by up to %s (copied or touched since)",
			differ, roughly(maxDiff)))
	}
	if deltas > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%d heap profile(s) are delta profiles (?seconds=N): they hold what changed in a window, not the heap, and are not used for its trend", deltas))
	}
	l.sameTimes()
	l.binaries()
}

// sameTimes says when profiles of one kind share a time: their order and spacing are then
// unknown (files copied together, without a time of their own).
func (l *loader) sameTimes() {
	for _, snaps := range [][]evidence.Snapshot{l.ev.Heaps, l.ev.GoroutineSnaps} {
		n := 0
		for i := 1; i < len(snaps); i++ {
			if snaps[i].T.Equal(snaps[i-1].T) {
				n++
			}
		}
		if n > 0 {
			l.ev.Notes = append(l.ev.Notes, fmt.Sprintf("%d %s profile(s) share their time with another: their order and spacing are unknown, and so is any trend through them",
				n+1, snaps[0].Kind))
		}
	}
}

// binaries says when the profiles come from more than one program.
func (l *loader) binaries() {
	var ids []string
	for _, it := range l.profiles {
		id := it.info.BuildID
		if id == "" {
			id = path.Base(it.info.Binary)
		}
		if id != "" && id != "." && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 1 {
		l.ev.Notes = append(l.ev.Notes, fmt.Sprintf("the profiles come from %d different binaries (%s): a trend across programs or builds means little; analyse each one's profiles apart",
			len(ids), strings.Join(ids[:min(3, len(ids))], ", ")))
	}
}

// mainModule sets the program's main module, given or inferred from the last heap (else
// goroutine) profile's source file paths.
func (l *loader) mainModule(given string) {
	ev := l.ev
	if given != "" {
		ev.SetMainModule(given)
		return
	}
	for _, snaps := range [][]evidence.Snapshot{ev.Heaps, ev.GoroutineSnaps, ev.LeakSnaps} {
		if len(snaps) == 0 {
			continue
		}
		p, err := ev.Profile(snaps[len(snaps)-1])
		if err != nil {
			continue
		}
		if mod := culprit.MainModule(p); mod != "" {
			ev.SetMainModule(mod)
			ev.Notes = append(ev.Notes, fmt.Sprintf("the program's own code is taken to be %s: inferred from the profiles' source file paths (--module sets it)", mod))
			return
		}
	}
}

// addLogs adds the gctrace logs' cycles, in time order of the runs they hold.
func (l *loader) addLogs() {
	ev := l.ev
	slices.SortStableFunc(l.logs, func(a, b *gcLog) int { return a.start().Compare(b.start()) })
	var first time.Time
	for _, lg := range l.logs {
		err := lg.emit(func(t time.Time, c gctrace.Cycle, run *gcRun, firstOfRun bool) {
			if firstOfRun {
				if first.IsZero() {
					first = run.start
				} else {
					ev.Restarts = append(ev.Restarts, run.start)
				}
			}
			ev.AddGCCycle(t, c)
		})
		if err != nil {
			ev.Notes = append(ev.Notes, fmt.Sprintf("gctrace log %s: %v", lg.name, err))
		}
		ev.Notes = append(ev.Notes, lg.notes()...)
	}
	if !first.IsZero() {
		ev.Target.Started = first
	}
}

// start is when the log's first run placed in time started (zero: none is).
func (lg *gcLog) start() time.Time {
	for _, r := range lg.runs {
		if !r.dropped {
			return r.start
		}
	}
	return time.Time{}
}

// notes says how the log's cycles were placed in time, and what was left out.
func (lg *gcLog) notes() []string {
	var out []string
	all, placed := lg.cycles()
	for _, r := range lg.runs {
		if r.fromMtime {
			out = append(out, fmt.Sprintf("gctrace log %s has no times on its lines: its %d cycles are placed by their @ offsets (seconds since the program started), "+
				"assuming its last line was written when the file was last modified (%s), so that the program started at %s",
				lg.name, r.cycles, lg.mtime.UTC().Format(time.RFC3339), r.start.UTC().Format(time.RFC3339)))
		}
	}
	if dropped := all - placed; dropped > 0 {
		out = append(out, fmt.Sprintf("gctrace log %s: %d cycle(s) of earlier runs of the program carry no times and cannot be placed: left out (keep the log with times: docker logs --timestamps, kubectl logs --timestamps)",
			lg.name, dropped))
	}
	if lg.skipped > 0 {
		out = append(out, fmt.Sprintf("gctrace log %s: skipped %d unparsable gc line(s)", lg.name, lg.skipped))
	}
	if lg.cut {
		out = append(out, fmt.Sprintf("gctrace log %s: only its first %d MiB were read", lg.name, maxLogBytes>>20))
	}
	return out
}

// restarts finds the restarts the heap profiles show: allocation totals only grow within
// one process, so a fall means a new one.
func (l *loader) restarts() {
	var prev *item
	n := 0
	for i := range l.profiles {
		it := &l.profiles[i]
		if it.info.Kind != session.KindHeap || !it.info.HasAlloc || it.info.Window > 0 {
			continue
		}
		if prev != nil && it.info.Heap.AllocSpace < prev.info.Heap.AllocSpace {
			l.ev.Restarts = append(l.ev.Restarts, it.info.Time)
			n++
		}
		prev = it
	}
	if n > 0 {
		l.ev.Notes = append(l.ev.Notes, fmt.Sprintf("the heap profiles' allocation totals fall %d time(s): the program restarted (or the profiles come from more than one process); trends are judged after the last restart", n))
	}
	slices.SortFunc(l.ev.Restarts, func(a, b time.Time) int { return a.Compare(b) })
	l.ev.Restarts = slices.CompactFunc(l.ev.Restarts, func(a, b time.Time) bool { return a.Equal(b) })
}

// target names the program: its binary as the profiles name it, else the first input (a
// folder's name, or a file's).
func (l *loader) target() {
	count := map[string]int{}
	best := ""
	for _, it := range l.profiles {
		b := path.Base(it.info.Binary)
		if it.info.Binary == "" || b == "." || b == "/" {
			continue
		}
		count[b]++
		if c := count[b]; c > count[best] || c == count[best] && b < best {
			best = b
		}
	}
	if best == "" {
		best = l.name
	}
	l.ev.Target.Name = best
}

// gaps says why what profiles and gctrace logs do not show cannot be judged. They are set
// before Finish, whose reasons speak of sessions.
func (l *loader) gaps(budget uint64) {
	ev := l.ev
	const noProc = "profiles and gctrace logs do not record resident memory: memdoctor watch (or run) on the service reads it from /proc"
	ev.Gap(evidence.GapRSS, noProc)
	ev.Gap(evidence.GapCPU, "profiles and gctrace logs do not record the process's CPU time")
	ev.Gap(evidence.GapAligned, noProc)
	ev.Gap(evidence.GapNonGo, noProc)
	cycles := 0
	for _, lg := range l.logs {
		_, placed := lg.cycles()
		cycles += placed
	}
	const windows = "the heap profiles among the inputs are delta or merged profiles: they cover windows, not the heap at an instant"
	if len(ev.PeriodicHeaps()) == 0 && cycles == 0 {
		if len(ev.Heaps) > 0 {
			ev.Gap(evidence.GapLive, windows)
		}
		ev.Gap(evidence.GapLive, "no heap profile and no gctrace log among the inputs")
	}
	if len(ev.GoroutineSnaps) == 0 {
		ev.Gap(evidence.GapGoroutines, "no goroutine profile among the inputs")
	}
	if cycles < 2 {
		noGC := "no gctrace log among the inputs (GODEBUG=gctrace=1 lines, as a container log keeps them): profiles do not record GC cycles"
		if len(l.logs) > 0 {
			noGC = "the gctrace logs hold fewer than two cycles placed in time (see the notes)"
		}
		ev.Gap(evidence.GapGC, noGC)
		ev.Gap(evidence.GapGCCPU, noGC)
	}
	switch len(ev.PeriodicHeaps()) {
	case 0:
		if len(ev.Heaps) > 0 {
			ev.Gap(evidence.GapHeapSnaps, windows)
		}
		ev.Gap(evidence.GapHeapSnaps, "no heap profile among the inputs")
	case 1:
		ev.Gap(evidence.GapHeapSnaps, "one heap profile: a snapshot of what the heap held then, not a trend (give two or more, taken minutes apart)")
	}
	if budget == 0 {
		ev.Gap(evidence.GapBudget, "no --memory-budget: profiles carry no memory limit")
	}
}

// roughly says a duration to the unit that matters: "3 days", "5h12m", "42s".
func roughly(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d.Hours()/24))
	}
	return d.Round(time.Second).String()
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
