// Package wire holds the types of the memdoctor agent's HTTP contract (the JSON served under
// /debug/memdoctor/), shared by the agent that serves them and the client that reads them.
// It imports nothing of memdoctor's, so that neither side depends on the other.
package wire

import (
	"encoding"
	"fmt"
	"time"
)

// Version of the HTTP contract served under /debug/memdoctor/.
const Version = 1

// Info describes the agent and its process: the body of GET /debug/memdoctor/.
type Info struct {
	Agent      string    `json:"agent"`   // always "memdoctor"
	Version    int       `json:"version"` // of this contract: 1
	PID        int       `json:"pid"`
	GoVersion  string    `json:"go_version"`
	MainModule string    `json:"main_module,omitempty"`
	Start      time.Time `json:"start"`

	SampleIntervalSeconds  float64 `json:"sample_interval_seconds"`
	HistorySeconds         float64 `json:"history_seconds"`
	ProfileIntervalSeconds float64 `json:"profile_interval_seconds"`

	// GOMemLimitBytes is the GOMEMLIMIT in force (0 = none); GOMemLimitSource says who set
	// it: "env", "program", "agent" or "".
	GOMemLimitBytes  uint64 `json:"gomemlimit_bytes"`
	GOMemLimitSource string `json:"gomemlimit_source,omitempty"`
	// BudgetBytes is what the guard measures against (0 = none); BudgetSource is "option",
	// "cgroup" or "".
	BudgetBytes  uint64 `json:"budget_bytes,omitempty"`
	BudgetSource string `json:"budget_source,omitempty"`

	FlightRecorder bool      `json:"flight_recorder"`
	Samples        int       `json:"samples"`
	Oldest         time.Time `json:"oldest,omitzero"` // the oldest sample held
	Pressure       Pressure  `json:"pressure"`
	ProfileBytes   int64     `json:"profile_bytes"` // held by the profile store
}

// PressureLevel says how close the service is to its memory budget.
type PressureLevel int

// The pressure levels.
const (
	PressureNormal   PressureLevel = iota // below the high threshold
	PressureHigh                          // at or above the high threshold (default 80%): shed optional work
	PressureCritical                      // at or above the critical threshold (default 95%): refuse work
)

var levelNames = [...]string{"normal", "high", "critical"}

func (l PressureLevel) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("PressureLevel(%d)", int(l))
}

// MarshalText encodes the level as its name.
func (l PressureLevel) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText decodes a level name.
func (l *PressureLevel) UnmarshalText(b []byte) error {
	for i, n := range levelNames {
		if string(b) == n {
			*l = PressureLevel(i)
			return nil
		}
	}
	return fmt.Errorf("unknown pressure level %q", b)
}

var (
	_ encoding.TextMarshaler   = PressureLevel(0)
	_ encoding.TextUnmarshaler = (*PressureLevel)(nil)
)

// Pressure is the guard's reading of memory use against the budget.
type Pressure struct {
	Level PressureLevel `json:"level"`
	Time  time.Time     `json:"time,omitzero"`
	// UsedBytes is the process's RSS (without /proc: the Go runtime's resident upper bound,
	// /memory/classes/total minus heap/released).
	UsedBytes   uint64  `json:"used_bytes"`
	BudgetBytes uint64  `json:"budget_bytes"` // 0 = no budget: the level stays normal
	Fraction    float64 `json:"fraction"`     // UsedBytes / BudgetBytes
}

// ProfileInfo describes one profile the agent holds.
type ProfileInfo struct {
	// Name is the profile's name in the agent and the file name a session stores it under,
	// e.g. "heap-20261122T064512.345Z-before-heap-jump.pb.gz".
	Name string    `json:"name"`
	Kind string    `json:"kind"` // "heap" or "goroutine"
	Time time.Time `json:"time"` // when it was taken
	// Label is "" for periodic snapshots, "before-<trigger>" or "after-<trigger>" for the
	// pair kept around a trigger event.
	Label string `json:"label"`
	Size  int    `json:"size"` // bytes of gzipped proto
}

// TraceInfo describes one kept flight-recorder snapshot.
type TraceInfo struct {
	Name string    `json:"name"` // e.g. "trace-20261122T064512.345Z-heap-jump.trace"
	Time time.Time `json:"time"`
	Size int       `json:"size"`
	// Events are the IDs of the events the snapshot covers.
	Events []uint64 `json:"events"`
}

// Event is one firing of a trigger, with the profiles kept around it.
type Event struct {
	ID      uint64    `json:"id"`
	Time    time.Time `json:"time"`
	Trigger string    `json:"trigger"`
	Detail  string    `json:"detail"`
	// Values are the figures that fired the trigger; each name carries its unit.
	Values map[string]float64 `json:"values,omitempty"`
	// SpikeStart is the agent's estimate of when the rise began: the "before" profiles were
	// taken at or before it when the agent still had one that old.
	SpikeStart time.Time `json:"spike_start"`
	// Before and After name the heap profiles kept around the event: the newest periodic
	// snapshot from before the rise, and one taken at the event.
	Before string `json:"before"`
	After  string `json:"after"`
	// BeforeGoroutine and AfterGoroutine are the goroutine profiles taken with them.
	BeforeGoroutine string `json:"before_goroutine,omitempty"`
	AfterGoroutine  string `json:"after_goroutine,omitempty"`
	// Trace names the flight-recorder snapshot taken after the event ("" when none).
	Trace string `json:"trace"`
}
