package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memdoctor/memdoctor/internal/recorder"
)

// TestRecordIncompleteSession: a recording whose session could not be written whole (a full
// disk) ends with exit 1 and one line saying so and naming the session, never with
// "session saved".
func TestRecordIncompleteSession(t *testing.T) {
	var stdout, stderr bytes.Buffer
	e := testEnv(&stdout, &stderr, nil)
	dir := filepath.Join(t.TempDir(), "s")
	cfg := recorder.Config{Out: dir}
	err := record(context.Background(), e, cfg, outputFlags{}, func(context.Context, <-chan struct{}) (recorder.Result, error) {
		return recorder.Result{Dir: dir, Status: "complete"},
			fmt.Errorf("%w: 12 write(s) failed, the first: append to metrics.jsonl: %w; what was written is still readable", recorder.ErrSessionWrite, syscall.ENOSPC)
	})
	if exitCode(err) != exitFailure {
		t.Fatalf("exit %d (%v), want %d", exitCode(err), err, exitFailure)
	}
	msg := oneLine(err.Error())
	for _, want := range []string{"could not be written whole", "no space left on device", dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(stderr.String(), "session saved") || stdout.Len() > 0 {
		t.Errorf("a broken session reported as saved or diagnosed:\n%s%s", stdout.String(), stderr.String())
	}
}
