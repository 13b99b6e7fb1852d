package facts

import "github.com/memdoctor/memdoctor/culprit"

// Observer reports a stack of the observer itself, never a culprit of the program
// (culprit.Observer: the pprof handlers, runtime/pprof, memdoctor's agent, the runtime's
// recording of a goroutine profile).
func Observer(stack []string) bool { return culprit.Observer(stack) }

// observerSite reports a site of the observer: its function, or the stack it was reached by.
func observerSite(d SiteDelta) bool {
	return Observer(d.Stack) || Observer([]string{d.Site.Function})
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
