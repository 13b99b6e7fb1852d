package holders

// Schema names the JSON form of a Result.
const Schema = "memdoctor/holders/v1"

// Result is what a reading found: for each culprit site, the reference paths from the GC
// roots that keep its sampled objects alive.
type Result struct {
	Schema string `json:"schema"`
	Target Target `json:"target"`
	// Stopped is how long a live process was stopped, in milliseconds (0 for a core).
	Stopped        float64 `json:"stopped_ms,omitempty"`
	StoppedSeconds float64 `json:"-"`
	// EstimatedStop is how long a live process was expected to be stopped, in milliseconds,
	// estimated before it was stopped.
	EstimatedStop float64 `json:"estimated_stop_ms,omitempty"`
	// Copied is how much of a live process's memory was copied while it was stopped (its
	// heap was then walked on the copy, the process running again).
	Copied   uint64      `json:"copied_bytes,omitempty"`
	Heap     HeapSummary `json:"heap"`
	Culprits []Culprit   `json:"culprits"`
	Notes    []string    `json:"notes,omitempty"`
	Timing   Timing      `json:"timing_ms"`
}

// Target is what was read, in the holders/v1 JSON form: the identity of the process.Target
// the walk read (a live process or a core), taken from it in one place (walk.targetOf).
type Target struct {
	Kind      string `json:"kind"` // process or core
	PID       int    `json:"pid,omitempty"`
	Exe       string `json:"exe,omitempty"`
	Core      string `json:"core,omitempty"`
	GoVersion string `json:"go_version"`
	Arch      string `json:"arch"`
	Module    string `json:"module,omitempty"`
}

// HeapSummary counts what the walk saw.
type HeapSummary struct {
	Spans      int    `json:"spans"`
	Slots      int    `json:"slots"`   // object slots of the in-use spans
	Objects    int    `json:"objects"` // objects reachable from the roots
	Bytes      uint64 `json:"bytes"`   // their bytes (size-class slots)
	Roots      int    `json:"roots"`   // root words pointing into the heap
	Goroutines int    `json:"goroutines"`
	Samples    int    `json:"samples"` // objects the heap profile sampled
	SampleRate uint64 `json:"sample_rate"`
}

// Timing splits the reading's time, in milliseconds.
type Timing struct {
	Prepare  float64 `json:"prepare"`        // symbols and types, and the copy's estimate, while the process runs
	Stop     float64 `json:"stop"`           // stopping every thread
	Copy     float64 `json:"copy,omitempty"` // copying what the walk reads, while stopped
	Roots    float64 `json:"roots"`          // spans, globals, specials, goroutines' stacks
	Walk     float64 `json:"walk"`           // the heap, from the roots
	Name     float64 `json:"name"`           // sampled objects, their stacks, their paths named
	Releases float64 `json:"releases"`       // what letting go of each top root frees
}

// Culprit is one allocation site and what holds its sampled objects.
type Culprit struct {
	Site    string  `json:"site"`
	Samples int     `json:"samples"`
	Bytes   float64 `json:"bytes"`   // estimated in-use bytes the samples stand for
	Objects float64 `json:"objects"` // estimated objects
	// Garbage counts sampled objects no root reaches: freed at the next GC.
	GarbageSamples int       `json:"garbage_samples,omitempty"`
	GarbageBytes   float64   `json:"garbage_bytes,omitempty"`
	Paths          []Path    `json:"paths"`
	Covered        float64   `json:"covered"` // share of the reachable sampled bytes the paths cover
	Releases       []Release `json:"releases,omitempty"`
}

// Path is one reference path, aggregated over the sampled objects it holds.
type Path struct {
	Root       Root    `json:"root"`
	Hops       []Hop   `json:"hops"`
	Expr       string  `json:"expr"`
	Goroutines []int64 `json:"goroutines,omitempty"` // the goroutines whose frames hold it (first ten)
	Samples    int     `json:"samples"`
	Bytes      float64 `json:"bytes"`
	Objects    float64 `json:"objects"`
	Share      float64 `json:"share"`
}

// Release is what letting go of one root would free: everything only it keeps reachable.
type Release struct {
	Root    string `json:"root"`
	Bytes   uint64 `json:"bytes"`
	Objects int    `json:"objects"`
}

// Root is the GC root a path starts from, named as in the source.
type Root struct {
	Kind      string `json:"kind"`                // global, goroutine, finalizer, cleanup, finalizer-queue, weak, register
	Name      string `json:"name"`                // the package variable, or the function of the goroutine's frame
	Var       string `json:"var,omitempty"`       // a goroutine frame's local variable
	Goroutine int64  `json:"goroutine,omitempty"` // the goroutine (frames only)
	Wait      string `json:"wait,omitempty"`      // what the goroutine waits for
	Type      string `json:"type,omitempty"`      // the variable's type
}

// Label is how the root reads in a path.
func (r Root) Label() string {
	switch r.Kind {
	case "goroutine":
		s := r.Name
		if r.Var != "" {
			s += "." + r.Var
		}
		return s
	default:
		return r.Name
	}
}

// Hop is one step of a reference path: the expression that reaches the next object from the
// one before (a field, a slice element, a map value, an interface's value...), and the type of
// the object reached.
type Hop struct {
	Expr string `json:"expr"`
	Type string `json:"type,omitempty"`
}
