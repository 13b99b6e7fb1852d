package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/internal/recorder"
)

// procRun runs a package's test process, the harness's test alone, and reads its events.
type procRun struct {
	s      *session
	p      *Package
	bin    string
	dir    string
	byName map[string]*TestResult
	total  int
	done   int // tests done so far, in every attempt
}

// The bounds of what memdoctor reads of a test process: the end of its own output (what the
// harness did not capture: a panic on another goroutine, a timeout), and one event.
const (
	maxProcessOutput = 16 << 10
	maxEventLine     = 8 << 20
)

// pollEvery is how often the events file is read.
const pollEvery = 100 * time.Millisecond

// harnessConfig is the harness's Config (leaktest/harness), as JSON.
type harnessConfig struct {
	Results   string        `json:"results"`
	Run       string        `json:"run,omitempty"`
	Skip      string        `json:"skip,omitempty"`
	TimeLimit time.Duration `json:"time_limit_ns"`
	Only      []string      `json:"only,omitempty"`
	Fresh     bool          `json:"fresh_after_leak"`
}

// run starts the test process once and follows it until it ends, or until a test's check runs
// past its budget (it is then killed). It returns whether a test got a verdict, whether the
// harness stopped to have the tests left checked in a new process (after a leak), or an error
// when the process could not start or ran no test.
func (pr *procRun) run(ctx context.Context, attempt int, only []string) (progressed, fresh bool, err error) {
	results := filepath.Join(pr.dir, fmt.Sprintf("events-%d.jsonl", attempt))
	f, err := os.OpenFile(results, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	cfg, err := json.Marshal(harnessConfig{Results: results, Run: pr.s.o.Run, Skip: pr.s.o.Skip, TimeLimit: pr.s.o.TimeLimit, Only: only, Fresh: true})
	if err != nil {
		return false, false, err
	}
	args := []string{"-test.run=" + harnessRun, "-test.paniconexit0"}
	if pr.s.o.Timeout > 0 {
		args = append(args, "-test.timeout="+pr.s.o.Timeout.String())
	}
	if pr.s.o.Short {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(pr.bin, args...)
	cmd.Dir = pr.p.Dir
	cmd.Env = pr.s.testEnv(filepath.Join(pr.dir, "tmp"), string(cfg))
	out := newTail(maxProcessOutput)
	cmd.Stdout, cmd.Stderr = out, out
	if err := recorder.StartGroup(cmd); err != nil {
		return false, false, fmt.Errorf("starting the test process: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ev := &eventReader{f: f}
	var current string         // the test under way
	var checkAt time.Time      // when its check began
	var aliveAt time.Time      // when the harness last said the check goes on
	inRun := false             // and whether a run of the test was under way then
	var firstRun time.Duration // how long its first run took
	runBudget, budget := 3*pr.s.o.TimeLimit+runBudgetSlack, 3*pr.s.o.TimeLimit+checkBudgetSlack
	killed, interrupted := "", false
	var waitErr error
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	handle := func() {
		for _, e := range ev.read() {
			switch e.Event {
			case "start":
				current, checkAt = e.Test, time.Time{}
				pr.s.progress(Progress{Package: pr.p.ImportPath, Test: e.Test, Checked: pr.done, Total: pr.total, Leaks: pr.leaks()})
			case "check":
				checkAt, aliveAt, inRun, firstRun = time.Now(), time.Now(), false, 0
				if e.Plain != nil {
					firstRun = e.Plain.Elapsed
				}
			case "alive":
				aliveAt, inRun = time.Now(), e.InRun
			case "result":
				if tr := pr.byName[e.Test]; tr != nil && tr.Verdict == "" {
					pr.record(tr, e)
					progressed = true
					pr.done++
					pr.s.progress(Progress{Package: pr.p.ImportPath, Test: e.Test, Done: true, Checked: pr.done, Total: pr.total, Leaks: pr.leaks()})
				}
				current = ""
			case "restart":
				fresh = true
			}
		}
	}
	started := time.Now()
loop:
	for {
		select {
		case waitErr = <-exited:
			break loop
		case <-ctx.Done():
			recorder.KillGroup(cmd.Process.Pid)
			interrupted = true
			waitErr = <-exited
			break loop
		case <-tick.C:
			handle()
			if current == "" || checkAt.IsZero() {
				continue
			}
			// A check past three times its time limit is stuck in a run that does not return
			// (or the process no longer answers); past its whole budget, stuck in its report.
			switch took := time.Since(checkAt); {
			case took > runBudget && (inRun || time.Since(aliveAt) > 5*time.Second):
				killed = fmt.Sprintf("a run of it was still under way when its check passed %s (three times --time-limit, and %s); its first run took %s, and a run under the check samples every allocation, which slows a test that allocates much",
					runBudget.Round(time.Second), runBudgetSlack, firstRun.Round(time.Millisecond))
			case took > budget:
				killed = fmt.Sprintf("its check ran past its budget (%s: three times --time-limit, and time for its report)", budget.Round(time.Second))
			default:
				continue
			}
			recorder.KillGroup(cmd.Process.Pid)
			waitErr = <-exited
			break loop
		}
	}
	recorder.KillGroup(cmd.Process.Pid) // what the tests started and left behind in its group
	handle()
	if interrupted {
		return progressed, false, nil
	}
	if current != "" {
		if tr := pr.byName[current]; tr != nil && tr.Verdict == "" {
			tr.Verdict = VerdictNotJudged
			tr.Elapsed = time.Since(started)
			tr.Output = out.String()
			switch {
			case killed != "":
				tr.Reason = killed + ": memdoctor stopped its test process"
			case strings.Contains(tr.Output, "panic: test timed out after"):
				tr.Reason = fmt.Sprintf("the package's -timeout (%s) ran out while it ran: raise -timeout", pr.s.o.Timeout)
			default:
				tr.Reason = "it ended the test process (" + exitText(waitErr) + ")" + lastLines(tr.Output, 3)
			}
			progressed = true
			pr.done++
		}
	}
	if !progressed {
		return false, false, fmt.Errorf("its test process ended (%s) before any test ran%s", exitText(waitErr), lastLines(out.String(), 5))
	}
	return true, fresh && current == "", nil
}

// exitText says how a process ended.
func exitText(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	}
	return err.Error()
}

// lastLines is ": " and the last n lines of a process's output, or "".
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return ": " + strings.Join(lines, " | ")
}

func (pr *procRun) leaks() int {
	n := 0
	for _, t := range pr.byName {
		if t.Verdict == VerdictLeak {
			n++
		}
	}
	return n
}

// record fills a test's result from its "result" event.
func (pr *procRun) record(tr *TestResult, e harnessEvent) {
	if e.Plain == nil {
		tr.Verdict, tr.Reason = VerdictNotJudged, "the harness wrote no result for it"
		return
	}
	tr.GoVerdict, tr.Parallel, tr.Elapsed, tr.Output = e.Plain.Verdict, e.Plain.Parallel, e.Plain.Elapsed, e.Plain.Output
	defer func() {
		if tr.Verdict != VerdictNotJudged && !pr.s.o.Verbose {
			tr.Output = ""
		}
	}()
	switch e.Plain.Verdict {
	case "pass":
	case "not-run":
		tr.Verdict = VerdictNotJudged
		return
	case "skip":
		tr.Verdict, tr.Reason = VerdictNotJudged, "it skips (go test: SKIP)"+skipReason(e.Plain.Output)
		return
	case "panic":
		tr.Verdict, tr.Reason = VerdictNotJudged, "it panics on its first run (go test: FAIL): "+firstLine(e.Plain.Panic)
		return
	default:
		tr.Verdict, tr.Reason = VerdictNotJudged, "it fails on its first run (go test: FAIL)"
		return
	}
	if e.NotChecked != "" {
		tr.Verdict, tr.Reason = VerdictNotJudged, "too slow for --time-limit "+pr.s.o.TimeLimit.String()+": "+e.NotChecked+"; raise --time-limit to check it"
		return
	}
	var rep reportFields
	if len(e.Report) == 0 || json.Unmarshal(e.Report, &rep) != nil {
		tr.Verdict, tr.Reason = VerdictNotJudged, "its check wrote no report"
		return
	}
	tr.Report, tr.Message, tr.Elapsed = e.Report, rep.Message, tr.Elapsed+rep.Elapsed
	switch rep.Verdict {
	case VerdictLeak, VerdictNoLeak, VerdictSuspected:
		tr.Verdict, tr.Reason = rep.Verdict, rep.Reason
		if strings.Contains(rep.Reason, "TimeLimit") {
			tr.Reason += " (memdoctor test's --time-limit)"
		}
	default:
		tr.Verdict, tr.Reason = VerdictNotJudged, "it passed its first run (go test: PASS), then: "+rep.Reason
		if strings.Contains(rep.Reason, "TimeLimit") {
			tr.Reason += " (memdoctor test's --time-limit)"
		}
		if rep.Reason == "" {
			tr.Reason = "leaktest gave no verdict (" + rep.Verdict + ")"
		}
		if e.Output != "" {
			tr.Output = e.Output // what the run that failed printed
		}
	}
}

// skipReason is ": " and what a skipped test said (the lines its go test -v output indents),
// or "".
func skipReason(out string) string {
	var said []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "    ") && len(said) < 3 {
			said = append(said, strings.TrimSpace(l))
		}
	}
	if len(said) == 0 {
		return ""
	}
	return ": " + strings.Join(said, " ")
}

// testEnv is the test process's environment: the user's, its temporary directory memdoctor's,
// memdoctor first in PATH, and the harness's Config.
func (s *session) testEnv(tmp, cfg string) []string {
	env := make([]string, 0, len(s.o.Env)+5)
	path := ""
	for _, kv := range s.o.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "TMPDIR", "TEMP", "TMP", harnessEnv:
			continue
		case "PATH":
			path = v
			continue
		}
		env = append(env, kv)
	}
	if s.o.MemdoctorDir != "" {
		path = s.o.MemdoctorDir + string(os.PathListSeparator) + path
	}
	return append(env, "PATH="+path, "TMPDIR="+tmp, "TEMP="+tmp, "TMP="+tmp, harnessEnv+"="+cfg)
}

// harnessEnv is the variable the harness reads its Config from (leaktest/harness.Env).
const harnessEnv = "MEMDOCTOR_TEST_HARNESS"

// eventReader reads the events the harness appends to its file, a whole line at a time, each
// line bounded: a longer one is skipped.
type eventReader struct {
	f       *os.File
	pending []byte
	skip    bool // inside a line too long to keep
	buf     [64 << 10]byte
}

func (r *eventReader) read() []harnessEvent {
	var out []harnessEvent
	for {
		n, err := r.f.Read(r.buf[:])
		data := r.buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if !r.skip {
					r.pending = append(r.pending, data...)
					if len(r.pending) > maxEventLine {
						r.pending, r.skip = r.pending[:0], true
					}
				}
				break
			}
			if !r.skip && len(r.pending)+i <= maxEventLine {
				line := append(r.pending, data[:i]...)
				var e harnessEvent
				if json.Unmarshal(line, &e) == nil {
					out = append(out, e)
				}
			}
			r.pending, r.skip = r.pending[:0], false
			data = data[i+1:]
		}
		if err != nil || n == 0 { // io.EOF: what the harness wrote so far is read
			return out
		}
	}
}
