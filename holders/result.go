package holders

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/units"
)

// Schema names the JSON form of a Result.
const Schema = "memdoctor/holders/v1"

// Result is what a reading found: for each culprit site, the reference paths from the GC
// roots that keep its sampled objects alive.
type Result struct {
	Schema string `json:"schema"`
	Target Target `json:"target"`
	// Read is when the reading was made (zero when not known: results saved before it was
	// recorded). A diagnosis judged as of an earlier time leaves out a reading made after it.
	Read time.Time `json:"read,omitzero"`
	// Stopped is how long a live process was stopped, in milliseconds (0 for a core).
	Stopped        float64 `json:"stopped_ms,omitempty"`
	StoppedSeconds float64 `json:"-"`
	// EstimatedStop is how long a live process was expected to be stopped, in milliseconds,
	// estimated before it was stopped.
	EstimatedStop float64 `json:"estimated_stop_ms,omitempty"`
	// Copied is how much of a live process's memory was copied while it was stopped (its
	// heap was then walked on the copy, the process running again).
	Copied uint64 `json:"copied_bytes,omitempty"`
	// NotResident is how much of what was copied was not resident in the process (pages it
	// never touched, or gave back to the system): zeros in the copy, never read, so that the
	// reading did not make them resident in it.
	NotResident uint64 `json:"not_resident_bytes,omitempty"`
	// SkippedRanges and SkippedBytes are what of the stacks could not be read while the
	// process was stopped (memory its map said was readable, and was not): the paths through
	// them are missing (a note says so).
	SkippedRanges int         `json:"skipped_ranges,omitempty"`
	SkippedBytes  uint64      `json:"skipped_bytes,omitempty"`
	Heap          HeapSummary `json:"heap"`
	Culprits      []Culprit   `json:"culprits"`
	Notes         []string    `json:"notes,omitempty"`
	Timing        Timing      `json:"timing_ms"`
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
	Prepare float64 `json:"prepare"`        // symbols and types, and the copy's estimate, while the process runs
	Stop    float64 `json:"stop"`           // stopping every thread
	Copy    float64 `json:"copy,omitempty"` // copying what the walk reads, while stopped
	Roots   float64 `json:"roots"`          // spans, globals, specials, goroutines' stacks
	Walk    float64 `json:"walk"`           // the heap, from the roots
	Name    float64 `json:"name"`           // sampled objects, their stacks, their paths named
	Cuts    float64 `json:"cuts"`           // what to cut: the dominators and what each cut frees (the process running again)
}

// Culprit is one allocation site and what holds its sampled objects.
type Culprit struct {
	Site    string  `json:"site"`
	Samples int     `json:"samples"`
	Bytes   float64 `json:"bytes"`   // estimated in-use bytes the samples stand for
	Objects float64 `json:"objects"` // estimated objects
	// Garbage counts sampled objects no root reaches: freed at the next GC.
	GarbageSamples int     `json:"garbage_samples,omitempty"`
	GarbageBytes   float64 `json:"garbage_bytes,omitempty"`
	Paths          []Path  `json:"paths"`
	Covered        float64 `json:"covered"` // share of the reachable sampled bytes the paths cover
	// Cuts say what to cut to free the culprit's objects, best first: the objects on their
	// paths that hold most of them alone (at most three; none when no object or root holds a
	// tenth of them alone).
	Cuts []Cut `json:"cuts,omitempty"`
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

// Cut is an object (or a root) that every path to some of the culprit's objects runs through,
// in the dominator tree of the reachable heap: with every reference to it cut, they become
// unreachable, and with them everything else only it keeps. The first cut of a culprit is the
// deepest object that holds alone nearly all (90%) of what its heaviest holder holds: the map,
// slice or struct the leak grows in, not the service object above it. Each next one is the same
// among the bytes left, while they are at least a tenth of the culprit's. A map's internals are
// cut as the map, a channel's buffer as the channel. A renderer says "cut Field (or Expr):
// frees Frees (Share of the culprit)".
type Cut struct {
	// Expr is the path to the object, as Go would reach it: the root, then each step (as in
	// Path.Expr); Root and Hops are its parts. For a root, its name.
	Expr string `json:"expr"`
	Root Root   `json:"root"`
	Hops []Hop  `json:"hops,omitempty"`
	// Field names the reference to cut by where it is declared, when it is a struct field
	// ("server.Account.lqws": the package's name, the type, the field) or a package variable;
	// empty otherwise (a map's value, a slice's element): then Expr says it.
	Field string `json:"field,omitempty"`
	// Type is the object's type.
	Type string `json:"type,omitempty"`
	// Samples, Bytes and Share are the culprit's sampled objects the object holds alone: how
	// many, the in-use bytes they stand for (the heap profile's estimate), and their share of
	// the culprit's reachable sampled bytes.
	Samples int     `json:"samples"`
	Bytes   float64 `json:"bytes"`
	Share   float64 `json:"share"`
	// Frees and FreesObjects are what cutting it would free, counted exactly on the heap: every
	// object that would become unreachable, the culprit's and the others it alone keeps.
	Frees        uint64 `json:"frees"`
	FreesObjects int    `json:"frees_objects"`
}

// Root is the GC root a path starts from, named as in the source.
type Root struct {
	Kind      string `json:"kind"`                // global, goroutine, finalizer, cleanup, finalizer-queue, weak, register
	Name      string `json:"name"`                // the package variable, or the function of the goroutine's frame
	Var       string `json:"var,omitempty"`       // a goroutine frame's local variable
	Goroutine int64  `json:"goroutine,omitempty"` // the goroutine (frames only)
	Wait      string `json:"wait,omitempty"`      // what the goroutine waits for
	Type      string `json:"type,omitempty"`      // the variable's type
	// Static: the root word is in a static the compiler laid out in the data segment for a
	// package-level composite literal (`var reg = &Registry{...}`), which has no name of its
	// own: Name is the variable that points at it (Type that variable's type), and the path
	// reads as Go would write it, the pointer implicitly dereferenced.
	Static bool `json:"static,omitempty"`
	// Guess, when the name is not certain, says what it stands on (a frame's temporary named
	// by the one captured variable of its type).
	Guess string `json:"guess,omitempty"`
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

// Said is the cut in one line, as the finding and the report say it: "cut server.Account.lqws:
// frees 69.0 MiB (100% of the culprit)". Names read from the target are escaped.
func (c Cut) Said() string {
	return fmt.Sprintf("cut %s: frees %s (%s of the culprit)", clean(c.what()), units.Bytes(float64(c.Frees)), units.Percent(c.Share))
}

// what names a cut as a renderer says it: by its field, else by its path.
func (c Cut) what() string {
	if c.Field != "" {
		return c.Field
	}
	return c.Expr
}
