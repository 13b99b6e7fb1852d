package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLimitMemory: memdoctor sets itself a soft memory limit, unless GOMEMLIMIT is set.
func TestLimitMemory(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	debug.SetMemoryLimit(math.MaxInt64)
	if got := LimitMemory(func(string) string { return "" }); got != SoftMemoryLimit || debug.SetMemoryLimit(-1) != SoftMemoryLimit {
		t.Errorf("without GOMEMLIMIT: %d in force, want %d", debug.SetMemoryLimit(-1), SoftMemoryLimit)
	}
	debug.SetMemoryLimit(3 << 30) // as the runtime set it from GOMEMLIMIT=3GiB
	if got := LimitMemory(func(k string) string { return map[string]string{"GOMEMLIMIT": "3GiB"}[k] }); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Errorf("with GOMEMLIMIT=3GiB: %d in force", debug.SetMemoryLimit(-1))
	}
}
