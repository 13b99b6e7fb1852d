package diagnose

import (
	"os"
	"testing"
	"time"
)

func TestTmpLook(t *testing.T) {
	dir := os.Getenv("LOOK_DIR")
	if dir == "" {
		t.Skip()
	}
	for _, w := range []time.Duration{30 * time.Second, 45 * time.Second, 60 * time.Second} {
		d, _ := diagnoseUntil(t, dir, w)
		for _, f := range d.Findings {
			if f.Kind == KindGoroutineLeak || f.Kind == KindHeapLeak {
				t.Logf("%v %s %s %s: %s\n  %s", w, f.Kind, f.Severity, f.Confidence, f.Title, f.Detail)
			}
		}
	}
}
