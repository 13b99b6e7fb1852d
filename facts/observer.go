package facts

import "strings"

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
	for _, fr := range stack {
		if profileRecording[fr] {
			return true
		}
		if strings.HasPrefix(fr, "runtime/pprof.") || strings.HasPrefix(fr, "net/http/pprof.") ||
			strings.HasPrefix(fr, agentPkg) && len(fr) > len(agentPkg) && (fr[len(agentPkg)] == '.' || fr[len(agentPkg)] == '/') {
			return true
		}
	}
	return false
}

// agentPkg is memdoctor's embeddable agent, the observer inside the program.
const agentPkg = "github.com/memdoctor/memdoctor/agent"

// observerSite reports a site of the observer: its function, or the stack it was reached by.
func observerSite(d SiteDelta) bool {
	return Observer(d.Stack) || Observer([]string{d.Site.Function})
}

// profileRecording are the runtime's functions that record a goroutine profile for
// runtime/pprof: nothing else calls them.
var profileRecording = map[string]bool{
	"runtime.doRecordGoroutineProfile":   true,
	"runtime.tryRecordGoroutineProfile":  true,
	"runtime.goroutineProfileWithLabels": true,
	"runtime.saveg":                      true,
}

// GoroutineOwn reports a stack that allocates a goroutine's own structures: its g (runtime.malg
// from runtime.newproc1, on the system stack, no frame of the program's) and the runtime's
// list of all goroutines (runtime.allgadd). The runtime keeps a g once made, for the next
// goroutine: that memory follows the most goroutines the program ever ran at once, and a
// growth of it is the goroutine count's (goroutine-leak judges it), not a heap leak of the
// program's code.
func GoroutineOwn(stack []string) bool {
	for _, fr := range stack {
		switch fr {
		case "runtime.newproc1", "runtime.malg", "runtime.allgadd":
			return true
		}
	}
	return false
}

// goroutineOwnSite reports a site of a goroutine's own structures (GoroutineOwn).
func goroutineOwnSite(d SiteDelta) bool {
	return GoroutineOwn(d.Stack) || GoroutineOwn([]string{d.Site.Function})
}
