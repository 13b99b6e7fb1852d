package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/holders/walk"
	"github.com/memdoctor/memdoctor/infile"
	"github.com/memdoctor/memdoctor/process"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/snapshot"
	"github.com/memdoctor/memdoctor/units"
)

var holdersCmd = &command{
	name:    "holders",
	args:    "[flags] PID | CORE EXECUTABLE",
	summary: "who keeps a leak alive: reference paths from the GC roots to a culprit's objects",
	help: `Holders answers the question a heap leak leaves open: what keeps the leaking memory alive. It
reads a Go process's heap from the outside, as the garbage collector walks it: from the roots
(package variables, every goroutine's frames, finalizers and the other specials) through every
pointer, and names the paths that lead to the objects a culprit function allocated: the root
(a package variable, or a goroutine's function and local variable with what it waits for),
then each step (a field, a slice element, a map key or value, an interface's dynamic type, a
closure's captured variable), spelled as in the source, with the bytes and objects each path
holds; and what to cut to free them: the object (a map, a slice, a struct's field) that holds
most of them alone, found on the dominator tree of the heap, with what cutting it frees.

The objects are the heap profile's sampled objects: the runtime marks each one with the stack
that allocated it, the same samples a heap profile counts, so the bytes shown are estimates
scaled as the heap profile scales them. Name the culprits with --site, or take the heap-leak
culprits of a diagnosis with --from; with neither, the sites holding the most sampled memory
are shown.

PID is a live process: it is stopped (every thread, with ptrace) only while what the walk reads
is copied (its heap in use, stacks and the runtime's metadata) into an unlinked file in
--tmpdir, then runs again while the copy is walked. Before stopping it, memdoctor estimates the
stop and the room the copy needs, and refuses a stop longer than --max-stop (default 1s: a
health check's usual timeout) or a directory without room; after, it says how long the process
was stopped. It runs again on every path, also when memdoctor fails or is killed.

CORE EXECUTABLE is a core file (gcore PID, or the kernel's for a program run with
GOTRACEBACK=crash) and the executable that made it: already a copy, walked as it is.
Supported: programs built by Go 1.26 and 1.27 for linux/amd64 or linux/arm64, with DWARF (the
default go build). Reading a live process needs Linux and permission to trace it; a core can
be read anywhere.`,
	examples: []string{
		"memdoctor holders --site main.(*store).remember 4242",
		"memdoctor holders --from memdoctor-sessions/server-20261122T101500Z 4242",
		"memdoctor holders --json holders.json --pprof holders.pb.gz 4242",
		"memdoctor holders --max-stop 3s --tmpdir /var/tmp 4242",
		"gcore -o core 4242 && memdoctor holders core.4242 ./server",
	},
}

func init() { holdersCmd.run = runHolders }

func runHolders(ctx context.Context, e *env, args []string) error {
	fs := newFlags(holdersCmd, e)
	var sites stringsFlag
	fs.Var(&sites, "site", "a culprit `FUNC` whose objects' holders to show (repeat it for several); the full name, or its end (store).remember")
	from := fs.String("from", "", "take the heap-leak culprits of a diagnosis: a session `DIR` (its holders are then saved in it for report and serve) or a diagnosis JSON file")
	jsonOut := fs.String("json", "", "also write the result as JSON to `FILE` (- for stdout; the text then goes to stderr)")
	pprofOut := fs.String("pprof", "", "also write a profile whose frames are the reference paths to `FILE`, for go tool pprof -http")
	top := fs.Int("top", 5, "with no --site or --from, show this many allocation sites")
	paths := fs.Int("paths", 10, "show at most this many paths per culprit")
	var sf stopFlags
	sf.register(fs, "")
	pos, err := parse(holdersCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if *top < 1 || *paths < 1 {
		return usagef("holders: --top and --paths want at least 1")
	}
	if err := sf.check(); err != nil {
		return usagef("holders: %v", err)
	}
	var opts walk.Options
	opts.Sites, opts.TopSites, opts.MaxPaths = sites, *top, *paths
	sf.apply(&opts)
	saveDir := ""
	if *from != "" {
		culprits, dir, err := leakCulprits(*from)
		if err != nil {
			return err
		}
		opts.Sites, saveDir = append(opts.Sites, culprits...), dir
	}
	t, err := openHolderTarget(pos)
	if err != nil {
		return err
	}
	defer t.Close()
	res, err := readHolders(ctx, e, t, opts)
	if err != nil {
		return err
	}
	text := e.stdout
	if *jsonOut == "-" {
		text = e.stderr
	}
	if err := holders.WriteText(text, res); err != nil {
		return err
	}
	if len(opts.Sites) > 0 && !anySampled(res) {
		return fmt.Errorf("holders: no sampled object was allocated under %s", strings.Join(opts.Sites, ", "))
	}
	if *jsonOut != "" {
		if err := writeOutput(e, "json", *jsonOut, func(w io.Writer) error { return writeHoldersJSON(w, res) }); err != nil {
			return err
		}
	}
	if *pprofOut != "" {
		if err := writeOutput(e, "pprof", *pprofOut, func(w io.Writer) error { return res.Profile().Write(w) }); err != nil {
			return err
		}
	}
	if saveDir != "" {
		if err := holders.Save(saveDir, res); err != nil {
			e.log.Warn("could not save the holders in the session", "err", err)
		} else {
			e.log.Info("saved in the session: " + filepath.Join(saveDir, holders.File) + "; memdoctor report and serve show it")
		}
	}
	return nil
}

// anySampled says whether a culprit has sampled objects.
func anySampled(r *holders.Result) bool {
	for _, c := range r.Culprits {
		if c.Samples > 0 {
			return true
		}
	}
	return false
}

// openHolderTarget opens PID, or CORE EXECUTABLE.
func openHolderTarget(pos []string) (*process.Target, error) {
	switch len(pos) {
	case 1:
		pid, err := strconv.Atoi(pos[0])
		if err != nil || pid <= 0 {
			return nil, usagef("holders: %q is not a process id; give a PID, or a CORE file and its EXECUTABLE", pos[0])
		}
		t, err := process.Attach(pid)
		if err != nil {
			return nil, fmt.Errorf("holders: %w", err)
		}
		return t, nil
	case 2:
		t, err := process.OpenCore(pos[0], pos[1])
		if err != nil {
			return nil, fmt.Errorf("holders: %w", err)
		}
		return t, nil
	}
	return nil, usagef("holders: want a PID, or a CORE file and its EXECUTABLE")
}

// stopFlags bound how a live process is stopped to read its holders: holders' and
// watch --holders' --max-stop and --tmpdir.
type stopFlags struct {
	maxStop time.Duration
	tmpDir  string
}

// register adds the flags; with is the flag they go with ("" for holders' own).
func (f *stopFlags) register(fs *flag.FlagSet, with string) {
	prefix := ""
	if with != "" {
		prefix = "with " + with + ": "
	}
	fs.DurationVar(&f.maxStop, "max-stop", snapshot.DefaultMaxStop, prefix+"refuse to stop a live process longer than `DURATION` to copy what its heap's walk reads (estimated before stopping it; 0: no bound)")
	fs.StringVar(&f.tmpDir, "tmpdir", "", prefix+"copy the process's memory into an unlinked file in `DIR` (default $TMPDIR, else /tmp): it needs about the heap in use")
}

// check refuses a --tmpdir that is not a directory.
func (f *stopFlags) check() error {
	if f.maxStop < 0 {
		return usagef("--max-stop %s: want a duration, or 0 for no bound", f.maxStop)
	}
	if f.tmpDir == "" {
		return nil
	}
	if st, err := os.Stat(f.tmpDir); err != nil || !st.IsDir() {
		return usagef("--tmpdir %s: not a directory; give one with room for a copy of the process's heap", f.tmpDir)
	}
	return nil
}

func (f *stopFlags) apply(o *walk.Options) {
	o.MaxStop, o.TempDir = f.maxStop, f.tmpDir
	if f.maxStop == 0 {
		o.MaxStop = -1
	}
}

// readHolders reads the target, saying before and after how long a live process is stopped.
// A first Ctrl-C cancels the reading; the process runs again either way.
func readHolders(ctx context.Context, e *env, t *process.Target, opts walk.Options) (*holders.Result, error) {
	s, release := handleStops(ctx, e)
	defer release()
	res, err := readHeap(s.ctx, e, t, opts)
	if err != nil && s.ctx.Err() != nil && ctx.Err() == nil {
		return nil, errors.New("holders: interrupted; the process runs again")
	}
	return res, err
}

// readHeap reads the target until ctx is done, saying before and after how long a live
// process is stopped (its memory is copied while it is, and walked once it runs again), and
// stamps the result with the time it was read.
func readHeap(ctx context.Context, e *env, t *process.Target, opts walk.Options) (*holders.Result, error) {
	opts.BeforeStop = func(est snapshot.Estimate) {
		free := ""
		if est.Free > 0 {
			free = fmt.Sprintf(" (%s free)", units.Bytes(float64(est.Free)))
		}
		e.log.Info(fmt.Sprintf("holders: stopping process %d for about %s to copy %s of its memory into an unlinked file in %s%s; its heap is walked on the copy once it runs again",
			t.PID, units.Duration(est.Stop), units.Bytes(float64(est.Bytes)), est.Dir, free))
	}
	res, err := walk.Read(ctx, t, opts)
	if t.Kind == "process" && res != nil {
		walked := time.Duration((res.Timing.Roots + res.Timing.Walk + res.Timing.Name) * float64(time.Millisecond))
		notThere := ""
		if res.NotResident > 0 {
			notThere = fmt.Sprintf(", of which %s not resident in it, left untouched", units.Bytes(float64(res.NotResident)))
		}
		e.log.Info(fmt.Sprintf("holders: process %d runs again: it was stopped for %s (copying %s%s took %s); the copy was walked in %s", t.PID,
			units.Duration(time.Duration(res.StoppedSeconds*float64(time.Second))), units.Bytes(float64(res.Copied)), notThere,
			units.Duration(time.Duration(res.Timing.Copy*float64(time.Millisecond))), units.Duration(walked)))
	}
	if err != nil {
		var tooLong *snapshot.TooLongError
		var noSpace *process.NoSpaceError
		switch {
		case errors.As(err, &tooLong):
			return nil, fmt.Errorf("holders: %w: nothing was stopped; allow it with --max-stop %s", err, tooLong.Allow())
		case errors.As(err, &noSpace):
			return nil, fmt.Errorf("holders: %w: nothing was stopped; give a directory with room with --tmpdir DIR", err)
		}
		return nil, fmt.Errorf("holders: %w", err)
	}
	res.Read = time.Now().UTC()
	return res, nil
}

// leakCulprits reads the heap-leak culprits of a diagnosis: a session directory's
// diagnosis.json, or a diagnosis JSON file. dir is the session, when it is one.
func leakCulprits(path string) (culprits []string, dir string, err error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file, dir = filepath.Join(path, session.DiagnosisFile), path
	}
	f, err := infile.Open(file, 64<<20)
	if err != nil {
		return nil, "", fmt.Errorf("holders: --from %s: %w (give a session directory, or a diagnosis written by --json)", path, err)
	}
	defer f.Close()
	var d struct {
		Schema   string `json:"schema"`
		Findings []struct {
			Kind     string `json:"kind"`
			Culprits []struct {
				Function string `json:"function"`
				Own      bool   `json:"own"`
			} `json:"culprits"`
		} `json:"findings"`
	}
	if err := json.NewDecoder(f).Decode(&d); err != nil || !strings.HasPrefix(d.Schema, "memdoctor/diagnosis/") {
		return nil, "", fmt.Errorf("holders: --from %s: not a memdoctor diagnosis (give a session directory, or a diagnosis written by --json)", path)
	}
	for _, fd := range d.Findings {
		if fd.Kind != "heap-leak" {
			continue
		}
		for i, c := range fd.Culprits {
			if i < 3 && c.Function != "" {
				culprits = append(culprits, c.Function)
			}
		}
	}
	if len(culprits) == 0 {
		return nil, "", fmt.Errorf("holders: --from %s: the diagnosis reports no heap leak; name the culprit with --site FUNC", path)
	}
	return culprits, dir, nil
}

func writeHoldersJSON(w io.Writer, r *holders.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// stringsFlag collects a repeatable flag; commas separate several values in one.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }

func (s *stringsFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}
