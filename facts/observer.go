package facts

import "strings"

// Observer reports a stack of the observer itself, never a culprit of the program: the pprof
// handlers build and compress profiles when memdoctor (or any client of the service's pprof)
// asks for them, runtime/pprof writes them, and memdoctor's embedded agent keeps its buffers
// and readers (bounded, and measured by its own tests). On a service of hundreds of thousands
// of goroutines a goroutine profile's records alone are tens of MiB, in use at a GC that runs
// while the request is served, and their size grows with the goroutines: an allocation site
// that grows, in step with a goroutine leak, and that memdoctor's own requests made.
func Observer(stack []string) bool {
	for _, fr := range stack {
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
