package cli

import (
	"context"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

var analyzeCmd = &command{
	name:    "analyze",
	args:    "[flags] PATH...",
	summary: "diagnose a saved session, a folder of profiles, profiles or gctrace logs, offline",
	help: `Analyze diagnoses what was already collected, with the same rules and the same reports as a
session. Each PATH is one of:

  a memdoctor session directory (from run, watch, demo, or one a killed collector left): it is
    diagnosed again, with a newer memdoctor or another --memory-budget, and its diagnosis.json
    is rewritten. A session is analysed on its own.
  a folder of profiles, read with its subfolders: heap, allocs, goroutine and goroutineleak
    profiles, mixed and named anyhow (the kind comes from each profile's content), as pprof
    protobuf (gzipped or not), legacy heap text (heap?debug=1) or goroutine text (debug=1,
    debug=2). Files that are neither profiles nor gctrace logs, profiles that cannot be read
    and profiles not about memory (CPU, mutex, block) are skipped, and a note counts them.
  a profile file, or several.
  a gctrace log: GODEBUG=gctrace=1 lines as the program wrote them or as a container log keeps
    them (docker logs --timestamps, kubectl logs --timestamps, the kubelet's CRI files,
    Docker's json-file driver), for the GC timeline: cycles, heap at each GC, goal, GC CPU,
    forced cycles. Without times on its lines, its last run is placed by assuming the last
    line was written when the file was last modified (a note says so).

Each profile is placed at the time it carries, else at its file's modification time. Several
profiles of one kind are judged as a trend, like a session's snapshots (a leak needs at least
three taken over 15 s or more, and says how much longer to watch when it is not yet proved);
a kind with one profile gets a snapshot diagnosis: what it holds at that instant, by the
program's own code (top retainers and allocators, known allocation patterns, goroutines by
site with a suspected pile-up when one blocked site dominates), never called a trend.`,
	examples: []string{
		"memdoctor analyze memdoctor-sessions/server-20261122T101500Z",
		"memdoctor analyze ./profiles/",
		"memdoctor analyze heap.pb.gz",
		"memdoctor analyze --module github.com/acme/svc heap-*.pb.gz goroutine.txt app.log",
		"memdoctor analyze --memory-budget 1GiB --json - ./session > diagnosis.json",
		"memdoctor analyze --html report.html ./profiles/",
	},
}

func init() { analyzeCmd.run = runAnalyze }

func runAnalyze(ctx context.Context, e *env, args []string) error {
	fs := newFlags(analyzeCmd, e)
	var out outputFlags
	out.register(fs)
	var budget sizeFlag
	fs.Var(&budget, "memory-budget", "the memory the service may use, e.g. "+sizeHelp+" (default: the session's, else unknown)")
	module := fs.String("module", "", "the program's main module `PATH` (e.g. github.com/acme/svc): its frames are \"own code\" (default: the session's, else inferred from the profiles)")
	pos, err := parse(analyzeCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("analyze: want a PATH: a session directory, a folder of profiles, profiles or gctrace logs")
	}
	if err := out.check(); err != nil {
		return err
	}
	ev, s, err := loadEvidence(e, pos, loadOptions{budget: budget.bytes, module: *module})
	if err != nil {
		return err
	}
	d := diagnose.Diagnose(ev, diagnose.Options{})
	if s != nil {
		if err := session.WriteDiagnosis(s.Dir, d); err != nil {
			e.log.Warn("could not save the diagnosis in the session", "err", err)
		}
	}
	if err := emit(e, d, out); err != nil {
		return err
	}
	if out.html != "" {
		if err := writeHTMLReport(e, s, ev, d, out.html); err != nil {
			return err
		}
	}
	return failOn(d, out.failOn)
}
