package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/recorder"
	"github.com/memdoctor/memdoctor/session"
)

// TestTuneRunner: each run records a session of its own under the experiment's directory,
// with the candidate's settings in the program's environment and the load generator beside
// it; a run that ended before its time is refused (it is not comparable).
func TestTuneRunner(t *testing.T) {
	fixture := filepath.Join(t.TempDir(), "gateway-gc") // a recorded session, copied: Run writes in it
	if err := os.CopyFS(fixture, os.DirFS(filepath.Join("..", "..", "tune", "testdata", "gateway-gc"))); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	var got []recorder.Config
	status := session.StatusComplete
	r := &tuneRunner{e: testEnv(&stdout, &stderr, nil), dir: t.TempDir(), budget: 1 << 30,
		cfg: recorder.Config{Command: []string{"./gateway"}, Duration: 10 * time.Second, Load: "hey -z 10s http://127.0.0.1:8080/"},
		record: func(ctx context.Context, cfg recorder.Config) (recorder.Result, error) {
			got = append(got, cfg)
			return recorder.Result{Dir: fixture, Status: status, Detail: "the program ended: exit status 2"}, nil
		}}
	run, err := r.Run(context.Background(), "gomemlimit-gogc-off", map[string]string{"GOMEMLIMIT": "803MiB", "GOGC": "off"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := got[0]
	if cfg.Out != filepath.Join(r.dir, "gomemlimit-gogc-off") || strings.Join(cfg.Env, " ") != "GOGC=off GOMEMLIMIT=803MiB" ||
		cfg.Load != r.cfg.Load || cfg.Duration != 10*time.Second {
		t.Errorf("recorded with %+v", cfg)
	}
	if run.D == nil || run.D.Summary.GCPerSecond == 0 || run.Session != fixture {
		t.Errorf("run %+v: want the session diagnosed", run)
	}
	if _, err := os.Stat(filepath.Join(fixture, session.DiagnosisFile)); err != nil {
		t.Errorf("the run's diagnosis was not saved in its session: %v", err)
	}
	status = session.StatusTargetExited
	if _, err := r.Run(context.Background(), "gogc-2850", map[string]string{"GOGC": "2850"}); err == nil || !strings.Contains(err.Error(), "not comparable") {
		t.Errorf("a run that ended early: %v", err)
	}
}
