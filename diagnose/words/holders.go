package words

import (
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
	"github.com/memdoctor/memdoctor/units"
)

// leakSites says who keeps a heap leak's growing objects alive, when its sites were named:
// the heaviest path, when memdoctor read the process's heap (every culprit carries its own
// paths); else, while the process can still be read, the holders command that reads it; else
// what the session's profiles show, why the holders were not read, and what reads them next
// time. No advice names a command for a process that has exited, or a reading already made.
func leakSites(f *Finding, s rule.LeakSitesSaid, fs *facts.Facts) {
	if !s.Named {
		return
	}
	if c, ok := heaviestHeld(f.Culprits); ok {
		f.Detail += heldSaid(c, fs)
		return
	}
	h := &fs.Holders
	if cmd := holdersCommand(f.Culprits, fs); cmd != "" {
		advice := "See who keeps the growing objects alive (the reference paths from the GC roots): " + cmd
		if h.Failed != "" {
			advice = fmt.Sprintf("Reading who keeps the growing objects alive failed (%s); once that is fixed: %s", h.Failed, cmd)
		}
		f.Advice = append(f.Advice, advice)
		return
	}
	f.Advice = append(f.Advice, "See what the growing objects are: "+pprofDiffCommand("inuse_space", s.Old, s.New))
	if why := notRead(fs); why != "" {
		f.Advice = append(f.Advice, why)
	}
}

// growingSites says how to see what grew between the profiles a finding compares, when its
// sites were named.
func growingSites(f *Finding, s rule.LeakSitesSaid) {
	if s.Named {
		f.Advice = append(f.Advice, "See what the growing objects are and who holds them: "+pprofDiffCommand("inuse_space", s.Old, s.New))
	}
}

// heaviestHeld is the culprit whose objects, held through some path, hold the most memory
// (what the reading estimated): the one the detail names.
func heaviestHeld(cs []rule.Culprit) (rule.Culprit, bool) {
	var best rule.Culprit
	found := false
	for _, c := range cs {
		if c.HeldBy != nil && len(c.HeldBy.Paths) > 0 && (!found || c.HeldBy.Bytes > best.HeldBy.Bytes) {
			best, found = c, true
		}
	}
	return best, found
}

// heldSaid is the detail's sentence on who holds a culprit's objects: its heaviest path.
func heldSaid(c rule.Culprit, fs *facts.Facts) string {
	p := c.HeldBy.Paths[0]
	stopped := ""
	if d := fs.Holders.Stopped; d > 0 {
		stopped = fmt.Sprintf(" (stopping it for %s)", units.Duration(d))
	}
	s := fmt.Sprintf(" memdoctor read the process's heap%s: what %s allocated is held by %s (%s of its sampled bytes still reachable)",
		stopped, shortFunc(c.Function), p.Expr, pct(p.Share))
	switch n := len(c.HeldBy.Paths) - 1; {
	case n == 1:
		s += ", and by one more path (under the culprit)"
	case n > 1:
		s += fmt.Sprintf(", and by %d more paths (under the culprit)", n)
	}
	s += "."
	if sk := fs.Holders.Result.SkippedSaid(); sk != "" {
		s += " " + sk + "."
	}
	return s
}

// shortFunc drops a function's package path: lab.(*assembler).bufferSegment.
func shortFunc(f string) string {
	end := len(f)
	if i := strings.IndexAny(f, "(["); i >= 0 {
		end = i // a receiver's or type argument's own paths stay
	}
	return f[strings.LastIndex(f[:end], "/")+1:]
}

// notRead says, when the session's process has exited, why who holds the growing objects was
// not read and what reads it next time; "" while the process may still run.
func notRead(fs *facts.Facts) string {
	h := &fs.Holders
	if !h.Gone {
		return ""
	}
	recorded := fs.Mode == "run" || fs.Mode == "demo"
	next := "memdoctor watch --holders reads it at the end of a watch, from the live service"
	if recorded {
		next = "memdoctor run and demo read it before they stop the program, once a heap leak is confirmed"
	}
	const s = "Who keeps the growing objects alive was not read: "
	switch {
	case h.Exited && recorded:
		return s + "the program exited on its own before memdoctor stopped it, and a heap is read while the program runs. " +
			"Next time, end the recording while it still runs (a --duration shorter than its life, or Ctrl-C): " + next + "."
	case h.Exited:
		return s + "the service exited before the watch ended, and a heap is read while the process runs. Next time: " + next + "."
	case h.Off:
		return s + "--holders=false turned it off. Next time, leave it on: " + next + "."
	case h.Failed != "":
		return s + "reading the process failed (" + strings.TrimSuffix(h.Failed, ".") + "), and it has exited since. Next time, once that is fixed: " + next + "."
	}
	what := "the process"
	if pid := fs.Target.PID; pid > 0 {
		what = fmt.Sprintf("the process (pid %d)", pid)
	}
	return fmt.Sprintf("%s%s has exited, so it cannot be read now. Next time: %s.", s, what, next)
}

// holdersCommand is the memdoctor holders command that names who keeps a leak's objects
// alive, while its process may still run ("" once it has exited): from the session (whose
// diagnosis names the culprits) when there is one, else for the culprit sites; of the process
// when its PID is known, else of a core of it.
func holdersCommand(culprits []rule.Culprit, fs *facts.Facts) string {
	if fs.Holders.Gone {
		return ""
	}
	var sites []string
	for i, c := range culprits {
		if i < 3 && c.Function != "" {
			sites = append(sites, "--site "+shellWord(c.Function))
		}
	}
	from := strings.Join(sites, " ")
	if fs.Session != "" {
		from = "--from " + shellWord(fs.Session)
	}
	if from == "" {
		return ""
	}
	if fs.Target.PID > 0 {
		return fmt.Sprintf("memdoctor holders %s %d", from, fs.Target.PID)
	}
	return fmt.Sprintf("memdoctor holders %s PID (the process's; or gcore PID, then CORE EXECUTABLE)", from)
}
