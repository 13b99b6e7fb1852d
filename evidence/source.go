package evidence

// Source says what produced a reading.
type Source uint8

// The sources of readings.
const (
	SourceUnknown          Source = iota
	SourceGCTrace                 // GODEBUG=gctrace=1 lines, one per GC cycle
	SourceRuntimeMetrics          // runtime/metrics, read in the process by memdoctor's agent
	SourceMemStats                // the MemStats block of /debug/pprof/heap?debug=1
	SourceHeapProfile             // the totals of a heap profile (inuse as of the last GC)
	SourceGoroutineProfile        // the goroutine profile's count
	SourceLeakProfile             // the goroutineleak profile: goroutines the GC proved leaked
	SourcePprofIndex              // the counts of the /debug/pprof/ index page
	SourceProc                    // /proc/PID of the process
	SourceCgroup                  // the process's memory cgroup
	SourcePrometheus              // client_golang's standard metrics, through Prometheus's HTTP API
	SourceProcessMemory           // the runtime's own figures, read from the process's memory by memdoctor (no endpoint)
)

var sourceNames = [...]string{
	SourceUnknown:          "",
	SourceGCTrace:          "gctrace",
	SourceRuntimeMetrics:   "runtime/metrics",
	SourceMemStats:         "memstats",
	SourceHeapProfile:      "heap profiles",
	SourceGoroutineProfile: "goroutine profiles",
	SourceLeakProfile:      "goroutineleak profiles",
	SourcePprofIndex:       "pprof index",
	SourceProc:             "/proc",
	SourceCgroup:           "cgroup",
	SourcePrometheus:       "prometheus",
	SourceProcessMemory:    "process memory",
}

// String names the source as reports print it.
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "unknown"
}

// MarshalText writes the source's name.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// sourceOf maps a session GoMem.Source to a Source.
func sourceOf(goSource string) Source {
	switch goSource {
	case "runtime/metrics":
		return SourceRuntimeMetrics
	case "memstats":
		return SourceMemStats
	case "prometheus":
		return SourcePrometheus
	case "process-memory":
		return SourceProcessMemory
	}
	return SourceUnknown
}
