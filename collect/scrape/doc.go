// Package scrape is the client that scrapes a Go service's net/http/pprof
// endpoints.
//
// A [Client] checks that a base URL serves the pprof index ([Client.Probe]),
// fetches proto profiles exactly as served and validates them
// ([Client.Profile], [Client.Heap], [Client.Goroutine]), fetches the grouped
// goroutine text ([Client.GoroutineText]) and parses the runtime.MemStats
// block that heap?debug=1 prints ([Client.MemStats], [ParseMemStats]) while
// streaming, so memdoctor's own memory stays bounded however large the
// target's heap text is.
//
// [Client.Index] reads the counts the index page lists (the goroutine count
// is runtime.NumGoroutine()) and [ParseIndex] parses them: cheap enough to
// poll every second. [Client.GoroutineLeak] fetches the goroutineleak
// profile (Go 1.27; Go 1.26 with GOEXPERIMENT=goroutineleakprofile).
//
// What a scrape costs the target: heap?debug=1 calls runtime.ReadMemStats
// (a short stop-the-world) and symbolises every heap record; a goroutine
// profile stops the world briefly; the index page costs a pass over the
// profiles' counts and no stop-the-world. The client never passes gc=1:
// memdoctor does not force garbage collections in the service it observes,
// with one deliberate exception, the goroutineleak profile, whose every
// fetch runs a GC cycle with leak detection in the target.
//
// Errors wrap sentinels so callers can tell the failures apart:
// [ErrUnreachable], [ErrTimeout], [ErrNotFound], [ErrNotPprof],
// [ErrNotProfile], [ErrCorruptProfile], [ErrUnexpectedProfile],
// [ErrTooLarge] and [ErrNoMemStats]; other HTTP statuses are a *[StatusError].
package scrape
