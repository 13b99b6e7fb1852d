package diagnose_test

import (
	"path/filepath"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/advice"
	"github.com/memdoctor/memdoctor/session"
)

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
		d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// A session of profiles alone knows no process: the service that served them may
		// still run, and the holders command it names (PID to fill in) is for that one.
		gone := d.Target.PID > 0
		for _, a := range advice.Dead(d, gone) {
			t.Errorf("%s: %s", filepath.Base(dir), a)
		}
		for _, f := range d.Findings {
			if f.Kind == diagnose.KindHeapLeak && len(f.Culprits) > 0 {
				leaks++
			}
		}
	}
	if leaks < 2 {
		t.Errorf("%d heap leaks with culprits among the sessions: the test proves little", leaks)
	}
}
