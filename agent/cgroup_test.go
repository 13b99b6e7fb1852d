package agent

import (
	"context"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
)

const fakePID = 4242

func fakeFS(tree string) procfs.FS { return procfs.FS{Root: "testdata/" + tree} }

func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

// withNoLimit runs fn with no memory limit in force and restores the limit afterwards.
func withNoLimit(t *testing.T, fn func()) {
	t.Helper()
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	fn()
}

func TestMemLimitFromCgroup(t *testing.T) {
	for _, tc := range []struct {
		tree  string
		ratio float64
		want  int64 // 0 = nothing set
		err   string
	}{
		{"v2-parent", 0.9, 241591910, ""}, // 0.9 x the parent's 256 MiB, not the leaf's "max"
		{"v1-parent", 0.5, 64 << 20, ""},  // the pod's 128 MiB, not the container's unlimited
		{"none", 0.9, 0, "GOMEMLIMIT left unset"},
		{"v2-parent", 0, 0, ""}, // not asked
	} {
		t.Run(tc.tree, func(t *testing.T) {
			withNoLimit(t, func() {
				m, err := applyMemLimit(fakeFS(tc.tree), fakePID, tc.ratio, env())
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Errorf("err = %v, want %q", err, tc.err)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				got := debug.SetMemoryLimit(-1)
				if tc.want == 0 {
					if got != math.MaxInt64 || m.set {
						t.Errorf("limit set to %d", got)
					}
					return
				}
				if got != tc.want || !m.set || m.source != MemLimitAgent {
					t.Errorf("limit %d (source %q), want %d", got, m.source, tc.want)
				}
				m.undo()
				if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
					t.Errorf("undo left the limit at %d", got)
				}
			})
		})
	}
}

func TestMemLimitNeverOverridesTheUser(t *testing.T) {
	withNoLimit(t, func() {
		for _, v := range []string{"1GiB", "off"} {
			m, err := applyMemLimit(fakeFS("v2-parent"), fakePID, 0.9, env("GOMEMLIMIT", v))
			if err != nil || m.set || m.source != MemLimitEnv || debug.SetMemoryLimit(-1) != math.MaxInt64 {
				t.Errorf("GOMEMLIMIT=%s: set %v source %q err %v", v, m.set, m.source, err)
			}
		}
		debug.SetMemoryLimit(300 << 20) // the program set its own
		m, err := applyMemLimit(fakeFS("v2-parent"), fakePID, 0.9, env())
		if err != nil || m.set || m.source != MemLimitProgram || debug.SetMemoryLimit(-1) != 300<<20 {
			t.Errorf("program limit: set %v source %q err %v", m.set, m.source, err)
		}
		m.undo()
		if debug.SetMemoryLimit(-1) != 300<<20 {
			t.Error("undo touched a limit the agent did not set")
		}
	})
}

// TestAgentReadsTheFakeTree starts an agent on a fake tree: its samples carry the fake
// process's RSS and LazyFree and the cgroup's usage and parent limit, which becomes the
// guard's budget.
func TestAgentReadsTheFakeTree(t *testing.T) {
	withNoLimit(t, func() {
		a, err := Start(context.Background(), withFS(fakeFS("v2-parent"), fakePID), WithMemoryLimitFromCgroup(0.75))
		if err != nil {
			t.Fatal(err)
		}
		var s slot
		waitFor(t, "a sample", func() bool { return a.ring.latest(&s) })
		info := a.Info()
		if err := a.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !s.hasPrc || s.proc.RSSBytes != 40960<<10 || s.proc.LazyFreeBytes != 2048<<10 || s.proc.PID != fakePID || s.proc.CPUSeconds != 2 {
			t.Errorf("proc part %+v", s.proc)
		}
		if !s.hasCg || s.cg.Version != 2 || s.cg.LimitBytes != 256<<20 || s.cg.UsageBytes != 50<<20 {
			t.Errorf("cgroup part %+v", s.cg)
		}
		if info.BudgetBytes != 256<<20 || info.BudgetSource != "cgroup" {
			t.Errorf("budget %d from %q", info.BudgetBytes, info.BudgetSource)
		}
		if info.GOMemLimitSource != MemLimitAgent || info.GOMemLimitBytes != 192<<20 {
			t.Errorf("gomemlimit %d from %q", info.GOMemLimitBytes, info.GOMemLimitSource)
		}
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("Stop left GOMEMLIMIT at %d", got)
		}
	})
}

func TestNoCgroupIsNotAnError(t *testing.T) {
	a, err := Start(context.Background(), withFS(fakeFS("none"), fakePID))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	var s slot
	waitFor(t, "a sample", func() bool { return a.ring.latest(&s) })
	if !s.hasPrc || s.hasCg || a.Info().BudgetBytes != 0 {
		t.Errorf("proc %v cgroup %v budget %d", s.hasPrc, s.hasCg, a.Info().BudgetBytes)
	}
}

// waitFor polls cond until it holds; the deadline only bounds a hung test, nothing is timed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
