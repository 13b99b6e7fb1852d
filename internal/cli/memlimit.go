package cli

import "runtime/debug"

// SoftMemoryLimit is the GOMEMLIMIT memdoctor gives itself: it practises what it preaches.
// Its peaks come from parsing profiles (bounded by pprofio) and building pprof's views
// (bounded by serve); under this soft limit the GC works harder near it instead of letting
// garbage double them. Measured on the hostile inputs of bench/hostile: analyze, report
// --html and serve on four profiles at pprofio's limit peak at 266 MiB under it, 317 to 347
// MiB without. Live memory above it is never refused: the GC's CPU limiter caps the cost.
const SoftMemoryLimit = 256 << 20

// LimitMemory sets SoftMemoryLimit as the process's soft memory limit for the command line
// args (os.Args[1:]), unless the user set GOMEMLIMIT (read through getenv), which the runtime
// has applied already, or the command is "lab" or "holders". A lab scenario runs in this
// process, and must keep the memory behaviour of the service it stands for. holders keeps a
// few words per object of the heap it reads, allocated once, while the process it reads is
// stopped: a soft limit below that only makes the GC run back to back and the stop last
// twice as long (measured on 10 million objects: 5.2 s against 2.6 s). It returns the limit
// in force.
func LimitMemory(getenv func(string) string, args []string) int64 {
	if getenv("GOMEMLIMIT") != "" || len(args) > 0 && (args[0] == labCmd.name || args[0] == holdersCmd.name) {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(SoftMemoryLimit)
	return SoftMemoryLimit
}
