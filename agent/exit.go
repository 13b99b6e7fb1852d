package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/agent/record"
)

// ExitSchema identifies the diagnosis.json the exit action writes.
const ExitSchema = "memdoctor/agent-exit/v1"

// ExitReport is the diagnosis.json of an exit action's session. It is not the diagnosis
// `memdoctor analyze` makes: the agent does not carry the diagnosis engine. Running
// `memdoctor analyze DIR` on the directory diagnoses the session in full (and replaces this
// file with the full diagnosis).
type ExitReport struct {
	Schema      string       `json:"schema"`
	Generated   time.Time    `json:"generated"`
	Reason      string       `json:"reason"`
	ExitStatus  int          `json:"exit_status"`
	HardLimit   uint64       `json:"hard_limit_bytes"`
	HeldSeconds float64      `json:"held_seconds"`
	Breakdown   breakdown.At `json:"breakdown"`
	Pressure    Pressure     `json:"pressure"`
	// PressureHistory holds the level changes since Start (the last 64).
	PressureHistory []Pressure `json:"pressure_history"`
	Events          []Event    `json:"events"`
	Stats           Stats      `json:"stats"`
	Note            string     `json:"note"`
}

// exitAction writes the evidence to a new session directory under the exit directory, logs
// one line and exits the process.
func (a *Agent) exitAction(heldFor time.Duration) {
	p := a.guard.current()
	hard := uint64(a.guard.hard * float64(a.guard.budget))
	dir := filepath.Join(a.cfg.exitDir, fmt.Sprintf("memdoctor-%d-%s", a.cfg.pid, time.Now().UTC().Format("20060102T150405.000Z")))
	reason := fmt.Sprintf("memory hard limit %s (%.0f%% of the %s budget) held for %s: using %s",
		fmtBytes(hard), 100*a.guard.hard, fmtBytes(a.guard.budget), heldFor.Round(time.Second), fmtBytes(p.UsedBytes))
	wrote := "wrote " + dir
	if err := a.writeExitSession(dir, reason, hard, heldFor); err != nil {
		wrote = "could not write all of " + dir + ": " + err.Error()
	}
	a.log.Error(fmt.Sprintf("memdoctor agent: %s; %s; exiting with status %d", reason, wrote, a.cfg.exitStatus),
		"dir", dir, "used_bytes", p.UsedBytes, "budget_bytes", a.guard.budget, "exit_status", a.cfg.exitStatus)
	a.cfg.exitFunc(a.cfg.exitStatus)
}

// writeExitSession writes a session memdoctor analyze reads: the manifest, the metrics
// history, every profile held plus a fresh heap and goroutine profile, the kept traces and
// the exit report as diagnosis.json.
func (a *Agent) writeExitSession(dir, reason string, hard uint64, heldFor time.Duration) error {
	info := a.Info()
	m := record.Manifest{
		MemdoctorVersion: "agent",
		Mode:             "agent",
		Start:            a.start.UTC(),
		Target:           a.target(),
		Notes:            []string{"written by the memdoctor agent's exit action: " + reason},
	}
	if info.BudgetBytes > 0 {
		m.MemoryBudgetBytes = info.BudgetBytes
		m.MemoryBudgetSource = map[string]string{"option": "flag", "cgroup": "cgroup"}[info.BudgetSource]
	}
	w, err := record.Create(dir, m)
	if err != nil {
		return err
	}
	var errs []error
	seq, end := a.ring.firstAfter(time.Time{})
	var s slot
	for ; seq < end; seq++ {
		if a.ring.get(seq, &s) {
			if err := w.AppendSample(s.sample()); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	now := time.Now()
	for kind, data := range a.capture() {
		if _, err := w.WriteProfile(kind, now, "exit", data); err != nil {
			errs = append(errs, err)
		}
	}
	for _, pi := range a.store.list() {
		if data, ok := a.store.bytesOf(pi.Name); ok {
			if _, err := w.WriteProfile(pi.Kind, pi.Time, pi.Label, data); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if a.flight != nil {
		if _, err := a.flight.snapshot(now, "exit", nil); err != nil {
			errs = append(errs, err)
		}
		for _, ti := range a.flight.list() {
			var buf appendWriter
			if ok, _ := a.flight.writeTo(ti.Name, &buf); ok {
				if _, err := w.WriteTrace(ti.Name, buf.b); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	rep := ExitReport{
		Schema:          ExitSchema,
		Generated:       now.UTC(),
		Reason:          reason,
		ExitStatus:      a.cfg.exitStatus,
		HardLimit:       hard,
		HeldSeconds:     heldFor.Seconds(),
		Breakdown:       a.Breakdown(),
		Pressure:        a.guard.current(),
		PressureHistory: a.guard.historyCopy(),
		Events:          a.Events(),
		Stats:           a.Stats(),
		Note:            "written by the memdoctor agent inside the process, which does not carry the diagnosis engine: run `memdoctor analyze " + dir + "` for the full diagnosis",
	}
	if err := w.WriteDiagnosis(rep); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, w.Close(record.StatusTargetExited, "the memdoctor agent's guard stopped the process: "+reason))
	return errors.Join(errs...)
}

// target describes this process for a manifest.
func (a *Agent) target() record.Target {
	t := record.Target{
		PID:             a.cfg.pid,
		GoVersion:       goVersion(),
		GoVersionSource: "agent",
		MainModule:      a.info.MainModule,
		Cmdline:         os.Args,
		GODEBUG:         os.Getenv("GODEBUG"),
		GOGC:            os.Getenv("GOGC"),
		GOMEMLIMIT:      os.Getenv("GOMEMLIMIT"),
		GOMAXPROCS:      runtime.GOMAXPROCS(0),
		Local:           true,
	}
	if exe, err := os.Executable(); err == nil {
		t.Exe = exe
		t.Name = filepath.Base(exe)
	}
	return t
}
