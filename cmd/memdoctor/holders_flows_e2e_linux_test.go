package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/internal/dev/advice"
)

// reassemblyHolder is the path that keeps the tcp-reassembly and traffic-agent scenarios'
// reassembly buffers alive: the assembler's map of streams, each with its pending segments.
const reassemblyHolder = "lab.(*assembler).expireLoop.a.streams[value].pending[i].data"

// TestRunShowsHolders: memdoctor run on a heap-leak scenario reads who holds the leak before
// it stops the program, and the heap-leak finding carries the paths: under its culprit in the
// text, in the diagnosis JSON (held_by), and again in memdoctor report of the saved session;
// no advice names a command for the program, which has exited.
func TestRunShowsHolders(t *testing.T) {
	if testing.Short() {
		t.Skip("records a leaking lab scenario for 40 s or more")
	}
	defer parallel(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "s")
	r := memdoctor(t, ctx, "run", "--duration", "45s", "--interval", "3s", "--out", dir, "--", memdoctorBin, "lab", "run", "tcp-reassembly")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "runs again: it was stopped for") {
		t.Errorf("run does not say how long it stopped the program:\n%s", r.stderr)
	}
	checkHeldInFinding(t, "run", r.stdout, r.stderr, loadDiagnosis(t, filepath.Join(dir, "diagnosis.json")), true)
	js := filepath.Join(t.TempDir(), "d.json")
	rep := memdoctor(t, ctx, "report", "--json", js, dir)
	if rep.code != 0 {
		t.Fatalf("report: exit %d\n%s", rep.code, rep.stderr)
	}
	checkHeldInFinding(t, "report", rep.stdout, r.stderr, loadDiagnosis(t, js), true)
}

// TestDemoShowsHolders: the first command a newcomer runs, as the README writes it (go run,
// whose binary has no DWARF: the demo builds its example's with it), shows who holds the
// reassembly buffers inside the heap-leak finding, and names no command for the example it
// has stopped.
func TestDemoShowsHolders(t *testing.T) {
	if testing.Short() {
		t.Skip("records a leaking lab scenario for 40 s or more")
	}
	defer parallel(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := exec.CommandContext(ctx, "go", "run", ".", "demo", "--out", dir, "--json", filepath.Join(t.TempDir(), "d.json"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if err := cmd.Run(); err != nil {
		t.Fatalf("go run . demo: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "building the example's binary with it") {
		t.Errorf("go run's binary has DWARF after all, or the demo did not say it builds one:\n%s", errb.String())
	}
	checkHeldInFinding(t, "demo", out.String(), errb.String(), loadDiagnosis(t, filepath.Join(dir, "diagnosis.json")), true)
}

// TestRunExitedOnItsOwn: a leaking program that exits on its own before memdoctor stops it
// cannot be read any more: the heap-leak finding says so plainly and what reads it next
// time, and names no command for it.
func TestRunExitedOnItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("records a leaking lab scenario for 40 s or more")
	}
	defer parallel(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "s")
	// timeout(1) ends the program with SIGINT after 40 s, before run's --duration.
	r := memdoctor(t, ctx, "run", "--duration", "2m", "--interval", "3s", "--out", dir, "--",
		"timeout", "-s", "INT", "40", memdoctorBin, "lab", "run", "tcp-reassembly")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	d := loadDiagnosis(t, filepath.Join(dir, "diagnosis.json"))
	leak := heapLeakOf(t, d, r.stdout)
	all := strings.Join(leak.Advice, "\n")
	if !strings.Contains(all, "exited on its own") || !strings.Contains(all, "memdoctor run and demo read it") {
		t.Errorf("the finding does not say the program exited before its heap was read:\n%s", all)
	}
	for _, a := range advice.Dead(d, true) {
		t.Error(a)
	}
}

// checkHeldInFinding checks that the heap-leak finding of a diagnosis and of its text carries
// the reassembly buffers' holder, and that no advice names a dead command (gone: the
// process has exited). log is what the command wrote to stderr, shown when the holders are
// missing.
func checkHeldInFinding(t *testing.T, what, text, log string, d *diagnose.Diagnosis, gone bool) {
	t.Helper()
	leak := heapLeakOf(t, d, text)
	if len(leak.Culprits) == 0 || leak.Culprits[0].HeldBy == nil || len(leak.Culprits[0].HeldBy.Paths) == 0 {
		t.Fatalf("%s: the heap leak's first culprit carries no holders: %+v\n%s", what, leak.Culprits, log)
	}
	if p := leak.Culprits[0].HeldBy.Paths[0]; !strings.HasSuffix(p.Expr, reassemblyHolder) {
		t.Errorf("%s: held by %q, want ...%s", what, p.Expr, reassemblyHolder)
	}
	section := findingText(text, "heap-leak")
	if !regexp.MustCompile(`\n        held by \S+` + regexp.QuoteMeta(reassemblyHolder) + `, \d+\.\d%, `).MatchString(section) {
		t.Errorf("%s: the heap-leak finding's text shows no holder under its culprit:\n%s", what, section)
	}
	for _, a := range advice.Dead(d, gone) {
		t.Errorf("%s: %s", what, a)
	}
}

// heapLeakOf returns the diagnosis' heap-leak finding, failing the test without one.
func heapLeakOf(t *testing.T, d *diagnose.Diagnosis, text string) diagnose.Finding {
	t.Helper()
	for _, f := range d.Findings {
		if f.Kind == diagnose.KindHeapLeak {
			return f
		}
	}
	t.Fatalf("no heap leak found:\n%s", text)
	return diagnose.Finding{}
}

// findingText is the text of one finding of kind in a text report: from its title line to the
// next finding or section.
func findingText(text, kind string) string {
	i := strings.Index(text, " "+kind+": ")
	if i < 0 {
		return ""
	}
	rest := text[i:]
	end := regexp.MustCompile(`\n  [A-Z]+( \(suspected\))? [a-z-]+: |\n\S`).FindStringIndex(rest[1:])
	if end == nil {
		return rest
	}
	return rest[:end[0]+1]
}
