package agent

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/memdoctor/memdoctor/agent/procfs"
)

// Sources of the GOMEMLIMIT in force, as Info reports them.
const (
	MemLimitUnset   = ""        // no limit
	MemLimitEnv     = "env"     // the GOMEMLIMIT environment variable
	MemLimitProgram = "program" // the program called debug.SetMemoryLimit
	MemLimitAgent   = "agent"   // the agent set it from the cgroup limit
)

// memLimit remembers what the agent did to the memory limit, to report and undo it.
type memLimit struct {
	source string
	set    bool  // the agent set it
	prev   int64 // the limit before
	value  int64 // the limit the agent set
	cgroup uint64
}

// applyMemLimit sets GOMEMLIMIT to ratio times pid's effective cgroup memory limit, unless
// ratio is 0 or the user set a limit (environment or program). The error says why nothing
// was set when the agent was asked to and could not.
func applyMemLimit(fs procfs.FS, pid int, ratio float64, getenv func(string) string) (memLimit, error) {
	cur := debug.SetMemoryLimit(-1)
	m := memLimit{prev: cur}
	switch {
	case getenv("GOMEMLIMIT") != "": // even "off": the user chose
		m.source = MemLimitEnv
		return m, nil
	case cur != math.MaxInt64:
		m.source = MemLimitProgram
		return m, nil
	case ratio <= 0:
		return m, nil
	}
	cg, err := fs.Cgroup(pid)
	if err != nil && cg.LimitBytes == 0 {
		return m, fmt.Errorf("GOMEMLIMIT left unset: reading the cgroup limit: %w", err)
	}
	if cg.LimitBytes == 0 {
		return m, fmt.Errorf("GOMEMLIMIT left unset: the cgroup %s has no memory limit", cg.Path)
	}
	limit := float64(cg.LimitBytes) * ratio
	if limit >= math.MaxInt64 {
		return m, nil
	}
	m.value = int64(limit)
	m.cgroup = cg.LimitBytes
	debug.SetMemoryLimit(m.value)
	m.set, m.source = true, MemLimitAgent
	return m, nil
}

// undo restores the previous limit if the limit in force is still the agent's.
func (m *memLimit) undo() {
	if m.set && debug.SetMemoryLimit(-1) == m.value {
		debug.SetMemoryLimit(m.prev)
	}
}

// current returns the limit in force in bytes (0 = none).
func currentMemLimit() uint64 {
	v := debug.SetMemoryLimit(-1)
	if v == math.MaxInt64 || v < 0 {
		return 0
	}
	return uint64(v)
}

var osGetenv = os.Getenv
