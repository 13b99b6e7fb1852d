package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLimitMemory: memdoctor sets itself a soft memory limit, unless GOMEMLIMIT is set or it
// runs a lab scenario (which must behave as the service it stands for).
func TestLimitMemory(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	debug.SetMemoryLimit(math.MaxInt64)
	noEnv := func(string) string { return "" }
	if got := LimitMemory(noEnv, []string{"analyze", "s"}); got != SoftMemoryLimit || debug.SetMemoryLimit(-1) != SoftMemoryLimit {
		t.Errorf("without GOMEMLIMIT: %d in force, want %d", debug.SetMemoryLimit(-1), SoftMemoryLimit)
	}
	debug.SetMemoryLimit(3 << 30) // as the runtime set it from GOMEMLIMIT=3GiB
	if got := LimitMemory(func(k string) string { return map[string]string{"GOMEMLIMIT": "3GiB"}[k] }, []string{"analyze", "s"}); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Errorf("with GOMEMLIMIT=3GiB: %d in force", debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := LimitMemory(noEnv, []string{"lab", "run", "gateway-gc"}); got != math.MaxInt64 {
		t.Errorf("lab run: %d in force, want none", got)
	}
}
