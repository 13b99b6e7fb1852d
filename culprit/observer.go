package culprit

import (
	"slices"
	"strings"
)

// Observer reports a stack of the observer itself, never a culprit of the program: the pprof
// handlers build and compress profiles when memdoctor (or any client of the service's pprof)
// asks for them, runtime/pprof writes them, and memdoctor's embedded agent keeps its buffers
// and readers (bounded, and measured by its own tests). On a service of hundreds of thousands
// of goroutines a goroutine profile's records alone are tens of MiB, in use at a GC that runs
// while the request is served, and their size grows with the goroutines: an allocation site
// that grows, in step with a goroutine leak, and that memdoctor's own requests made.
//
// The runtime's own recording of a goroutine profile (runtime.doRecordGoroutineProfile and
// the stacks it saves for each goroutine) runs on the system stack, and its heap profile
// stack holds no frame of runtime/pprof: its functions are the observer's too.
func Observer(stack []string) bool {
	return slices.ContainsFunc(stack, observerFrame)
}

// observerFrame reports a function of the observer (see Observer).
func observerFrame(fn string) bool {
	return profileRecording[fn] || strings.HasPrefix(fn, "runtime/pprof.") || strings.HasPrefix(fn, "net/http/pprof.") ||
		strings.HasPrefix(fn, agentPkg) && len(fn) > len(agentPkg) && (fn[len(agentPkg)] == '.' || fn[len(agentPkg)] == '/')
}

// agentPkg is memdoctor's embeddable agent, the observer inside the program.
const agentPkg = "github.com/memdoctor/memdoctor/agent"

// profileRecording are the runtime's functions that record a goroutine profile for
// runtime/pprof: nothing else calls them.
var profileRecording = map[string]bool{
	"runtime.doRecordGoroutineProfile":   true,
	"runtime.tryRecordGoroutineProfile":  true,
	"runtime.goroutineProfileWithLabels": true,
	"runtime.saveg":                      true,
}
