package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/internal/recorder"
)

// collectFlags are the flags shared by run, watch and demo.
type collectFlags struct {
	pprof    string
	duration time.Duration
	interval time.Duration
	sample   time.Duration
	out      string
	budget   sizeFlag
	output   outputFlags
	// leakEvery is --leak-check-every: 0 = never (as recorder.Config's negative).
	leakEvery time.Duration
}

// outputFlags say what to do with a diagnosis: shared by every command that makes one.
type outputFlags struct {
	json   string
	html   string
	failOn string
	// holders (watch --holders): read who holds a confirmed heap leak before reporting,
	// stopping the process as stop allows.
	holders bool
	stop    stopFlags
	// until, when set and not zero, is where the report's evidence ends: a watch
	// --until-confirmed reports the verdict it stopped on, not one the readings that came in
	// while it stopped could tip back below its line.
	until func() time.Time
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.json, "json", "", "also write the diagnosis as JSON to `FILE` (- for stdout; the text report then goes to stderr)")
	fs.StringVar(&o.html, "html", "", "also write the report as one self-contained HTML page with charts to `FILE` (see memdoctor report -h)")
	fs.StringVar(&o.failOn, "fail-on", "", "exit with status 3 when a finding of this `SEVERITY` or above exists: warning or critical")
}

func (o *outputFlags) check() error {
	if err := o.stop.check(); err != nil {
		return err
	}
	if o.failOn == "" {
		return nil
	}
	if sev, ok := diagnose.ParseSeverity(o.failOn); !ok || sev == diagnose.Info {
		return usagef("--fail-on %q: want warning or critical", o.failOn)
	}
	return nil
}

func (f *collectFlags) register(fs *flag.FlagSet, withPprof bool) {
	if withPprof {
		fs.StringVar(&f.pprof, "pprof", "", "also scrape this pprof base `URL` (default: find /debug/pprof/ on the ports the program listens on)")
	}
	fs.DurationVar(&f.duration, "duration", 0, "stop after this long, e.g. 90s or 10m (default: until Ctrl-C or the target exits)")
	fs.DurationVar(&f.interval, "interval", 10*time.Second, "time between profile snapshots")
	fs.DurationVar(&f.sample, "sample", time.Second, "time between metric samples")
	fs.StringVar(&f.out, "out", "", "session `DIR` (default ./memdoctor-sessions/<name>-<UTC time>)")
	fs.Var(&f.budget, "memory-budget", "the memory the service may use, e.g. "+sizeHelp+" (default: its cgroup limit, else unknown)")
	fs.DurationVar(&f.leakEvery, "leak-check-every", recorder.DefaultLeakCheckEvery, "fetch the goroutineleak profile (Go 1.27+) at the start, when goroutines climb, and at least this often; each fetch runs one GC in the target; 0 = never")
	f.output.register(fs)
}

func (f *collectFlags) check() error {
	switch {
	case f.duration < 0:
		return usagef("--duration %s: must not be negative", f.duration)
	case f.interval < time.Second:
		return usagef("--interval %s: must be at least 1s", f.interval)
	case f.sample < 100*time.Millisecond:
		return usagef("--sample %s: must be at least 100ms", f.sample)
	case f.leakEvery < 0 || f.leakEvery > 0 && f.leakEvery < 15*time.Second:
		return usagef("--leak-check-every %s: want 0 (never) or at least 15s (each fetch runs a GC in the target)", f.leakEvery)
	}
	return f.output.check()
}

// config builds the recorder configuration; name names the default session directory.
func (f *collectFlags) config(e *env, mode, name string, fs *flag.FlagSet) recorder.Config {
	out := f.out
	if out == "" {
		out = defaultOut(name, time.Now())
	}
	flags := map[string]string{}
	fs.Visit(func(fl *flag.Flag) { flags[fl.Name] = fl.Value.String() })
	cfg := recorder.Config{
		Mode: mode, Out: out, Duration: f.duration, Interval: f.interval, Sample: f.sample,
		PprofURL: f.pprof, MemoryBudget: f.budget.bytes, Version: version(), Flags: flags,
		Logger: e.log, Stdout: e.stdout, Stderr: e.stderr, LeakCheckEvery: f.leakEvery,
	}
	if f.leakEvery == 0 {
		cfg.LeakCheckEvery = -1 // never
	}
	if e.term != nil {
		cfg.OnStatus = func(s recorder.Status) { e.term.setStatus(statusLine(s)) }
		if e.stdoutTerm {
			cfg.Stdout = e.term.through(e.stdout)
		}
	}
	return cfg
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultOut is ./memdoctor-sessions/<name>-<UTC time stamp>.
func defaultOut(name string, now time.Time) string {
	name = strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-.")
	if name == "" {
		name = "session"
	}
	return filepath.Join("memdoctor-sessions", fmt.Sprintf("%s-%s", name, now.UTC().Format("20060102T150405Z")))
}

func statusLine(s recorder.Status) string {
	target := "waiting for the target"
	if s.PID != 0 {
		target = fmt.Sprintf("%s[%d]", s.Target, s.PID)
	}
	pprof := ""
	if !s.Profiles {
		pprof = " (no profiles yet)"
	}
	return fmt.Sprintf("memdoctor %s  %s  RSS %s  heap %s  GC %.1f/s  snapshots %d%s",
		s.Elapsed.Truncate(time.Second), target, fmtBytes(s.RSSBytes), fmtBytes(s.HeapBytes),
		s.GCPerSecond, s.HeapSnapshots, pprof)
}
