package accuracy

// Vantage is how a service was observed.
type Vantage string

// The vantage points.
const (
	// Run: memdoctor started the program: gctrace, /proc, pprof.
	Run Vantage = "run"
	// WatchPprof: memdoctor attached to its net/http/pprof endpoint.
	WatchPprof Vantage = "watch-pprof"
	// WatchAgent: memdoctor attached to its embedded memdoctor agent.
	WatchAgent Vantage = "watch-agent"
	// Profiles: the heap and goroutine profiles alone, as someone who curl'd them holds them.
	Profiles Vantage = "profiles"
	// WatchMemory: a build of the scenario that links no profiling (no pprof, no agent: its
	// heap profiling is off), watched by PID from its memory with --enable-heap-profiling.
	WatchMemory Vantage = "watch-memory"
)

// Vantages lists every vantage point.
var Vantages = []Vantage{Run, WatchPprof, WatchAgent, Profiles, WatchMemory}
