package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/holders/walk"
	"github.com/memdoctor/memdoctor/internal/recorder"
	"github.com/memdoctor/memdoctor/process"
	"github.com/memdoctor/memdoctor/session"
)

// holdersHelp is the help of run's and demo's --holders.
const holdersHelp = "when a heap leak is confirmed by the end, read who holds its culprits' objects (memdoctor holders) before stopping the program, and show the paths in the finding; the program is stopped (ptrace) while its heap is read; needs Linux; --holders=false turns it off"

// holdersAtEnd is recorder.Config.Holders for run and demo (on unless --holders=false) and
// watch --holders: it diagnoses the session so far and, when a heap leak is confirmed, reads
// who holds its culprits' objects from the target while it still runs, and saves that in the
// session, where the diagnosis reads it into the finding. What it could not do it returns
// (the manifest counts it; the finding says it).
func holdersAtEnd(e *env, dir string, budget uint64, on bool, sf stopFlags) func(context.Context, int, bool) error {
	return func(ctx context.Context, pid int, running bool) error {
		s, err := session.Open(dir)
		if err != nil {
			e.log.Warn("holders: could not read the session so far", "err", err)
			return recorder.ErrNoHolders
		}
		d, _, err := diagnoseSession(s, budget)
		if err != nil {
			e.log.Warn("holders: could not diagnose the session so far", "err", err)
			return recorder.ErrNoHolders
		}
		sites := confirmedLeakSites(d)
		switch {
		case len(sites) == 0:
			if s.Manifest.Mode == "watch" { // asked for with --holders: say why nothing was read
				e.log.Info("holders: no confirmed heap leak, so no holders to read")
			}
			return recorder.ErrNoHolders
		case !on:
			return errors.New(holders.UnreadOff)
		case !running:
			return errors.New(holders.UnreadExited)
		case pid <= 0:
			return errors.New("the process is not on this machine: its heap is read on its host")
		}
		e.log.Info(fmt.Sprintf("holders: a heap leak is confirmed: reading who holds %s", strings.Join(sites, ", ")))
		t, err := process.Attach(pid)
		if errors.Is(err, process.ErrNoDWARF) {
			err = errors.New("the program's executable has no DWARF, which names its variables (go run leaves it out, as do -ldflags=-s and -w): run a binary go build made")
		}
		if err != nil {
			e.log.Warn("holders: " + err.Error())
			return err
		}
		defer t.Close()
		opts := walk.Options{Sites: sites}
		sf.apply(&opts)
		res, err := readHeap(ctx, e, t, opts)
		if err != nil {
			e.log.Warn(err.Error())
			return errors.New(strings.TrimPrefix(err.Error(), "holders: "))
		}
		if err := holders.Save(dir, res); err != nil {
			e.log.Warn("holders: could not save them in the session", "err", err)
			return fmt.Errorf("saving them in the session: %w", err)
		}
		return nil
	}
}

// confirmedLeakSites are the culprits (at most three each) of a diagnosis' confirmed heap
// leaks, whose holders run, demo and watch --holders read.
func confirmedLeakSites(d *diagnose.Diagnosis) []string {
	var sites []string
	for _, f := range d.Findings {
		if f.Kind != diagnose.KindHeapLeak || f.Confidence != diagnose.Confirmed || f.Severity == diagnose.Info {
			continue
		}
		for i, c := range f.Culprits {
			if i < 3 && c.Function != "" {
				sites = append(sites, c.Function)
			}
		}
	}
	return sites
}

// targetRuns reports whether a session's target still runs on this machine: a local process
// with its PID and the same start time (within the /proc clock's second). Without a start
// time to compare, a PID may have been reused: it is not taken to run.
func targetRuns(t session.Target) bool {
	if !t.Local || t.PID <= 0 || t.Started.IsZero() {
		return false
	}
	st, err := procfs.FS{}.Stat(t.PID)
	if err != nil || st.State == 'Z' || st.State == 'X' {
		return false
	}
	d := st.StartTime.Sub(t.Started)
	return d > -2*time.Second && d < 2*time.Second
}
