package accuracy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/lab"
	"github.com/memdoctor/memdoctor/session"
)

// Config says how to record scenarios.
type Config struct {
	// Memdoctor is the memdoctor binary that observes.
	Memdoctor string
	// Lab is the binary whose `lab run NAME` runs a scenario; "" = Memdoctor. LabGo127 runs
	// the scenarios that need Go 1.27 (the goroutineleak profile); "" = Lab.
	Lab, LabGo127 string
	// LabNoPprof is internal/dev/labrun built with the nopprof tag: the scenarios that link no
	// profiling, watched by PID from their memory (WatchMemory); LabNoPprofGo127 the same
	// built by Go 1.27, for the scenarios that need it ("" = LabNoPprof). Without it the
	// WatchMemory vantage point is not recorded (an error says so).
	LabNoPprof, LabNoPprofGo127 string
	// Memory says which scenarios the WatchMemory vantage point records (it runs after the
	// others, alone, so each one it records lengthens the matrix by a recording); nil = every
	// one. A scenario it skips has no WatchMemory session and no error: its cells say "–".
	Memory func(lab.Scenario) bool
	// MemoryAlongside records the WatchMemory vantage point at the same time as the others
	// (its build of the scenario beside the one memdoctor run started) rather than after them,
	// alone: a scenario then takes one recording's time, not two, and every vantage point
	// records under the same load, two scenario processes.
	MemoryAlongside bool
	// Duration is how long each recording lasts: the longest window judged.
	Duration time.Duration
	// Interval is the profile snapshot interval; 0 = 10 s, memdoctor's default.
	Interval time.Duration
	// Dir holds the sessions: Dir/<scenario>/<vantage>.
	Dir string
	// Log receives each process's output, prefixed; nil = discard.
	Log io.Writer
}

// Recording is one scenario recorded from every vantage point at once.
type Recording struct {
	Scenario lab.Scenario
	// Sessions are the session directories by vantage point; a vantage point whose recording
	// failed is missing, with its error in Errors.
	Sessions map[Vantage]string
	Errors   map[Vantage]error
}

// servingRE finds the pprof URL in a scenario's first line.
var servingRE = regexp.MustCompile(`serving pprof on (http://\S+)/debug/pprof/`)

// Record runs a scenario under `memdoctor run` and, while it runs, attaches `memdoctor
// watch` to its pprof endpoint and to its embedded agent; the run's profiles alone make the
// fourth session. Then it runs the scenario built without profiling and watches it by PID,
// from its memory (the fifth).
func Record(ctx context.Context, cfg Config, sc lab.Scenario) (*Recording, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	labBin := cfg.Lab
	if labBin == "" {
		labBin = cfg.Memdoctor
	}
	if sc.Expect.Go127 && cfg.LabGo127 != "" {
		labBin = cfg.LabGo127
	}
	dir := filepath.Join(cfg.Dir, sc.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rec := &Recording{Scenario: sc, Sessions: map[Vantage]string{}, Errors: map[Vantage]error{}}
	common := []string{"--duration", cfg.Duration.String(), "--interval", cfg.Interval.String()}
	if sc.Expect.Budget != "" {
		common = append(common, "--memory-budget", sc.Expect.Budget)
	}
	env := append(os.Environ(), "NO_COLOR=1", "MEMDOCTOR_LAB_AGENT=1")
	env = append(env, sc.Expect.Env...)

	var wg sync.WaitGroup
	var mu sync.Mutex
	// The build that links no profiling: after the others, alone, so that each recording has
	// one scenario process loading the machine; or alongside them (MemoryAlongside).
	memory := func() {
		if cfg.Memory != nil && !cfg.Memory(sc) {
			return // not asked for
		}
		vdir := filepath.Join(dir, string(WatchMemory))
		if ctx.Err() != nil {
			return
		}
		err := errors.New("not recorded: no lab program built without profiling (Config.LabNoPprof)")
		if cfg.LabNoPprof != "" {
			err = recordMemory(ctx, cfg, sc, vdir, common, env)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			rec.Errors[WatchMemory] = err
		} else {
			rec.Sessions[WatchMemory] = vdir
		}
	}
	if cfg.MemoryAlongside {
		wg.Go(memory)
	}

	runDir := filepath.Join(dir, string(Run))
	runArgs := append(append([]string{"run"}, common...), "--out", runDir, "--", labBin, "lab", "run", sc.Name)
	run := exec.CommandContext(ctx, cfg.Memdoctor, runArgs...)
	run.Env = env
	out, err := run.StdoutPipe()
	if err != nil {
		wg.Wait()
		return nil, err
	}
	lw := &lineWriter{w: cfg.Log, prefix: sc.Name + "/run: "}
	run.Stderr = lw
	if err := run.Start(); err != nil {
		wg.Wait()
		return nil, fmt.Errorf("%s: start memdoctor run: %w", sc.Name, err)
	}
	urls := make(chan string, 1)
	go func() {
		sent := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			lw.Write([]byte(line + "\n"))
			if m := servingRE.FindStringSubmatch(line); m != nil && !sent {
				urls <- m[1]
				sent = true
			}
		}
		if !sent {
			close(urls)
		}
	}()
	select {
	case url, ok := <-urls:
		if ok {
			for _, v := range []Vantage{WatchPprof, WatchAgent} {
				source := "pprof"
				if v == WatchAgent {
					source = "agent"
				}
				vdir := filepath.Join(dir, string(v))
				args := append(append([]string{"watch", "--source", source}, common...), "--out", vdir, url)
				wg.Go(func() {
					cmd := exec.CommandContext(ctx, cfg.Memdoctor, args...)
					cmd.Env = env
					w := &lineWriter{w: cfg.Log, prefix: sc.Name + "/" + string(v) + ": "}
					cmd.Stdout, cmd.Stderr = w, w
					err := cmd.Run()
					mu.Lock()
					defer mu.Unlock()
					if err != nil && !hasManifest(vdir) {
						rec.Errors[v] = fmt.Errorf("memdoctor watch --source %s: %w", source, err)
						return
					}
					rec.Sessions[v] = vdir
				})
			}
		}
	case <-time.After(30 * time.Second):
	}
	runErr := run.Wait()
	wg.Wait()
	if !hasManifest(runDir) {
		return rec, fmt.Errorf("%s: memdoctor run left no session: %v", sc.Name, runErr)
	}
	rec.Sessions[Run] = runDir
	for _, v := range []Vantage{WatchPprof, WatchAgent} {
		if _, ok := rec.Sessions[v]; !ok && rec.Errors[v] == nil {
			rec.Errors[v] = errors.New("the scenario never said where it serves pprof")
		}
	}
	if !cfg.MemoryAlongside {
		memory()
	}
	pdir := filepath.Join(dir, string(Profiles))
	if err := profilesOnly(runDir, pdir); err != nil {
		rec.Errors[Profiles] = err
	} else {
		rec.Sessions[Profiles] = pdir
	}
	return rec, nil
}

func hasManifest(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, session.ManifestFile))
	return err == nil
}

// profilesOnly makes a session of a session's profiles alone: no samples, no gctrace, none
// of what memdoctor read from /proc or the process's build: what someone who curl'd the
// profiles every interval holds.
func profilesOnly(from, to string) error {
	s, err := session.Open(from)
	if err != nil {
		return err
	}
	w, err := session.Create(to, session.Manifest{Mode: string(Profiles), Start: s.Manifest.Start, End: s.Manifest.End})
	if err != nil {
		return err
	}
	for _, p := range s.Profiles {
		if p.Kind == session.KindGoroutineText {
			continue
		}
		b, err := os.ReadFile(p.Path)
		if err != nil {
			continue
		}
		if _, err := w.WriteProfile(p.Kind, p.Time, p.Label, b); err != nil {
			return err
		}
	}
	return w.Close(session.StatusComplete, "the profiles of "+from)
}

// lineWriter prefixes each line written to w.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}
