package diagnose

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// deadAdvice lists the advice of d that names a command for a process that has exited (gone:
// the holders command, or the target's PID), or reads again what was read already (the
// holders command in a finding whose culprits carry who holds them).
func deadAdvice(d *Diagnosis, gone bool) []string {
	// A command that names the PID: memdoctor's, gcore's, kill's... up to the clause's end.
	pid := regexp.MustCompile(fmt.Sprintf(`\b(memdoctor|gcore|kill|dlv|curl)\b[^;()]*[^0-9]%d([^0-9]|$)`, d.Target.PID))
	var dead []string
	for _, f := range d.Findings {
		read := false
		for _, c := range f.Culprits {
			read = read || c.HeldBy != nil
		}
		for _, a := range f.Advice {
			holdersCmd := strings.Contains(a, "memdoctor holders")
			switch {
			case read && holdersCmd:
				dead = append(dead, fmt.Sprintf("%s: reads again what was read: %s", f.Kind, a))
			case gone && holdersCmd:
				dead = append(dead, fmt.Sprintf("%s: a holders command for a process that has exited: %s", f.Kind, a))
			case gone && d.Target.PID > 0 && pid.MatchString(a):
				dead = append(dead, fmt.Sprintf("%s: names the PID of a process that has exited: %s", f.Kind, a))
			}
		}
	}
	return dead
}

// TestNoAdviceForAnExitedProcess: the golden and recorded sessions' processes are long gone
// (and run's are stopped when it ends): no advice of their diagnoses names a command for one.
// A session of profiles alone names no process, so none of it is known to have exited.
func TestNoAdviceForAnExitedProcess(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/sessions/*")
	rec, _ := filepath.Glob("testdata/recorded/*")
	dirs = append(dirs, rec...)
	if len(dirs) < 10 {
		t.Fatalf("%d sessions", len(dirs))
	}
	leaks := 0
	for _, dir := range dirs {
		if !session.IsDir(dir) {
			continue // folders of profiles: no process to name
		}
		s, err := session.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := DiagnoseSession(s, evidence.Options{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// A session of profiles alone knows no process: the service that served them may
		// still run, and the holders command it names (PID to fill in) is for that one.
		gone := d.Target.PID > 0
		for _, a := range deadAdvice(d, gone) {
			t.Errorf("%s: %s", filepath.Base(dir), a)
		}
		for _, f := range d.Findings {
			if f.Kind == KindHeapLeak && len(f.Culprits) > 0 {
				leaks++
			}
		}
	}
	if leaks < 2 {
		t.Errorf("%d heap leaks with culprits among the sessions: the test proves little", leaks)
	}
}
