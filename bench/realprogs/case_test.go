package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeWatch is a stand-in memdoctor: watch writes a diagnosis naming fakeprog's leak site
// and makes the session directory; with FAKE_WATCH_HANG set it waits to be interrupted.
const fakeWatch = `#!/bin/sh
[ "$1" = watch ] || exit 9
shift
while [ $# -gt 1 ]; do
	case "$1" in
	--json) json=$2; shift 2;;
	--out) out=$2; shift 2;;
	*) shift 2;;
	esac
done
mkdir -p "$out"
if [ -n "$FAKE_WATCH_HANG" ]; then
	trap 'echo "{\"schema\":\"memdoctor/diagnosis/v1\",\"findings\":[]}" > "$json"; exit 0' INT
	sleep 60 & wait
fi
echo '{"schema":"memdoctor/diagnosis/v1","summary":{"samples":3},"findings":[{"kind":"goroutine-leak","severity":"warning","culprits":[{"function":"main.leak"}]}]}' > "$json"
`

// fakeCase builds testdata/fakeprog into a cache where the builder finds it, and returns a
// case whose load leaks 30 goroutines in it, the stand-in memdoctor, and where fakeprog
// writes its pid and the case's work directory.
func fakeCase(t *testing.T) (testCase, *builder, string, func() (pid int, work string)) {
	t.Helper()
	dir := t.TempDir()
	p := &program{name: "fakeprog", module: "example.com/fakeprog", pkg: "example.com/fakeprog", install: true}
	v := version{version: "v1", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"main.leak"}}
	p.versions = []version{v}
	b := &builder{cache: filepath.Join(dir, "cache"), log: io.Discard}
	bin := filepath.Join(b.cache, cacheKey(p, v), p.binName())
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/fakeprog").CombinedOutput(); err != nil {
		t.Fatalf("build fakeprog: %v\n%s", err, out)
	}
	pidFile := filepath.Join(dir, "pid")
	var work string
	p.setup = func(w string) (*launch, error) {
		work = w
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		return &launch{
			args:  []string{"-addr", fmt.Sprintf("127.0.0.1:%d", port)},
			env:   []string{"FAKEPROG_PID_FILE=" + pidFile},
			pprof: localURL(port, "/debug/pprof/"),
			load: func(ctx context.Context) string {
				for i := 0; i < 30; i++ {
					if resp, err := http.Get(localURL(port, "/leak")); err == nil {
						resp.Body.Close()
					}
				}
				<-ctx.Done()
				return "30 leaks"
			},
		}, nil
	}
	md := filepath.Join(dir, "memdoctor")
	if err := os.WriteFile(md, []byte(fakeWatch), 0o755); err != nil {
		t.Fatal(err)
	}
	return testCase{prog: p, ver: v}, b, md, func() (int, string) {
		b, _ := os.ReadFile(pidFile)
		pid, _ := strconv.Atoi(string(b))
		return pid, work
	}
}

// TestRunCase runs a whole case on fakeprog: readiness, the harness's readings around the
// load, the watch, the judgement, and the cleanup (program stopped, work directory gone).
func TestRunCase(t *testing.T) {
	c, b, md, state := fakeCase(t)
	o := options{sessions: t.TempDir(), duration: time.Second, repeat: 1}
	r := runCase(context.Background(), o, b, md, c, 0)
	if r.Skipped != "" || r.WatchError != "" {
		t.Fatalf("case did not run: %+v", r)
	}
	if !r.Right || r.CulpritRank != 1 || r.Load != "30 leaks" {
		t.Errorf("result %+v; want right with main.leak first", r)
	}
	// fakeprog runs main and a goroutine per connection; the readings count their own, and a
	// connection another client closed may still be in its goroutine's last steps (one such
	// failed the test comparing before+30 with after: 4 then 33). The 30 leaked goroutines
	// are seen when the count after holds them and main, and the one before is below them.
	if r.Before.Goroutines == 0 || r.Before.Goroutines >= 30 || r.After.Goroutines < 1+30 || r.After.RSS == 0 {
		t.Errorf("readings before %+v after %+v; want the 30 leaked goroutines seen", r.Before, r.After)
	}
	for _, f := range []string{"diagnosis.json", "target.log", "watch.txt", "session"} {
		if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
			t.Errorf("case directory lacks %s: %v", f, err)
		}
	}
	pid, work := state()
	if pid == 0 || alive(pid) {
		t.Errorf("fakeprog (pid %d) still runs after the case", pid)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Errorf("work directory %s left behind: %v", work, err)
	}
}

// TestRunCaseInterrupted cancels a case during the watch: the case is reported as
// interrupted, not judged, and nothing is left running.
func TestRunCaseInterrupted(t *testing.T) {
	c, b, md, state := fakeCase(t)
	t.Setenv("FAKE_WATCH_HANG", "1")
	o := options{sessions: t.TempDir(), duration: time.Minute, repeat: 1}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if pid, _ := state(); pid != 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		cancel()
	}()
	r := runCase(ctx, o, b, md, c, 0)
	if !strings.HasPrefix(r.Skipped, "interrupted") || r.Right {
		t.Errorf("result %+v; want interrupted", r)
	}
	if pid, _ := state(); alive(pid) {
		t.Errorf("fakeprog (pid %d) still runs after the interruption", pid)
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, "diagnosis.json")); err != nil || !strings.Contains(string(b), "diagnosis/v1") {
		t.Errorf("memdoctor was not interrupted gently (no diagnosis written): %q, %v", b, err)
	}
}
