// Command verdicts writes the full diagnosis of every recording it is given, so that a change
// meant to keep every verdict can be proved to: run it before and after, and compare the two
// directories byte for byte (diff -r).
//
//	go run ./bench/verdicts -out /tmp/v-before -sim 3 ./diagnose/testdata /tmp/acc/sessions
//	(change the rules)
//	go run ./bench/verdicts -out /tmp/v-after -sim 3 ./diagnose/testdata /tmp/acc/sessions
//	diff -r /tmp/v-before /tmp/v-after
//
// Each PATH is searched for sessions (directories with a manifest or samples), each diagnosed
// whole and cut every -step from its start, as the accuracy matrix and bench/realprogs cut
// them; -folders names folders and files of profiles, each diagnosed as memdoctor analyze
// diagnoses them; -sim N adds the simulator's sessions, N seeds per shape, vantage point and
// window. Every diagnosis is stamped with the same time; a session's evidence is written
// beside its whole-window diagnosis.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/sim"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/source/pprofdir"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "verdicts:", err)
		os.Exit(1)
	}
}

var stamp = diagnose.Options{Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }}

func run(args []string) error {
	fl := flag.NewFlagSet("verdicts", flag.ContinueOnError)
	out := fl.String("out", "", "the directory to write the diagnoses to (required)")
	step := fl.Duration("step", 10*time.Second, "cut each session every step from its start (0 = whole only)")
	folders := fl.String("folders", "", "folders and files of profiles, comma-separated, each diagnosed as one input")
	simN := fl.Int("sim", 0, "simulated sessions per shape, vantage point and window (0 = none)")
	simDir := fl.String("simdir", filepath.Join(os.TempDir(), "memdoctor-verdicts-sim"), "where the simulated sessions are written (the same path every run)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-out is required")
	}
	n := 0
	for _, root := range fl.Args() {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || !session.IsDir(p) {
				return err
			}
			n++
			return sessionVerdicts(*out, name(p), p, *step)
		})
		if err != nil {
			return err
		}
	}
	if *folders != "" {
		for _, p := range strings.Split(*folders, ",") {
			n++
			if err := folderVerdict(*out, p); err != nil {
				return err
			}
		}
	}
	for i, spec := range simSpecs(*simN) {
		dir := filepath.Join(*simDir, strconv.Itoa(i))
		os.RemoveAll(dir)
		if _, err := sim.Generate(dir, spec.seed, spec.Spec); err != nil {
			return err
		}
		n++
		if err := sessionVerdicts(*out, fmt.Sprintf("sim-%s-%s-%s-%d", spec.Shape, spec.Vantage, spec.Window, spec.seed), dir, 0); err != nil {
			return err
		}
		os.RemoveAll(dir)
	}
	fmt.Printf("%d inputs diagnosed into %s\n", n, *out)
	return nil
}

type simSpec struct {
	sim.Spec
	seed uint64
}

func simSpecs(n int) []simSpec {
	var out []simSpec
	for _, sh := range sim.Shapes {
		for _, v := range sim.Vantages {
			for _, w := range sim.WindowsOf(sh) {
				for seed := uint64(1); seed <= uint64(n); seed++ {
					out = append(out, simSpec{sim.Spec{Shape: sh, Vantage: v, Window: w}, seed})
				}
			}
		}
	}
	return out
}

// name is a file name for a path: its last elements and a hash of the whole.
func name(p string) string {
	abs, _ := filepath.Abs(p)
	h := sha256.Sum256([]byte(abs))
	parts := strings.Split(filepath.ToSlash(abs), "/")
	if len(parts) > 3 {
		parts = parts[len(parts)-3:]
	}
	return strings.Join(parts, "_") + "-" + hex.EncodeToString(h[:4])
}

// sessionVerdicts writes a session's whole-window diagnosis and evidence, and the diagnosis
// of each cut.
func sessionVerdicts(out, base, dir string, step time.Duration) error {
	s, err := session.Open(dir)
	if err != nil {
		return write(out, base+".open-error", []byte(err.Error()+"\n"))
	}
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, stamp)
	if err != nil {
		return write(out, base+".error", []byte(err.Error()+"\n"))
	}
	if err := writeJSON(out, base+".json", d); err != nil {
		return err
	}
	if err := writeJSON(out, base+".evidence.json", ev); err != nil {
		return err
	}
	if step <= 0 || ev.End.IsZero() {
		return nil
	}
	start := s.Manifest.Start
	for w := step; start.Add(w).Before(ev.End.Add(step)); w += step {
		d, _, err := diagnose.DiagnoseSession(s, evidence.Options{Until: start.Add(w)}, stamp)
		if err != nil {
			return write(out, fmt.Sprintf("%s.%04ds.error", base, int(w.Seconds())), []byte(err.Error()+"\n"))
		}
		if err := writeJSON(out, fmt.Sprintf("%s.%04ds.json", base, int(w.Seconds())), d); err != nil {
			return err
		}
	}
	return nil
}

// folderVerdict diagnoses a folder or file of profiles as memdoctor analyze does.
func folderVerdict(out, p string) error {
	ev, err := pprofdir.Load([]string{p}, pprofdir.Options{})
	if err != nil {
		return write(out, name(p)+".error", []byte(err.Error()+"\n"))
	}
	d := diagnose.Diagnose(ev, stamp)
	if err := writeJSON(out, name(p)+".json", d); err != nil {
		return err
	}
	return writeJSON(out, name(p)+".evidence.json", ev)
}

func writeJSON(out, file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return write(out, file, append(b, '\n'))
}

func write(out, file string, b []byte) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, file), b, 0o644)
}
