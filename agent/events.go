package agent

import (
	"maps"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// Triggers, as named in events and in the labels of the profiles kept around them.
const (
	// TriggerHeapJump: the live heap or the heap goal at a GC jumped above the last minute's
	// lowest.
	TriggerHeapJump = "heap-jump"
	// TriggerRSS: the process's RSS rose through the threshold.
	TriggerRSS = "rss-threshold"
	// TriggerGoroutines: the goroutine count grew above the last minute's lowest.
	TriggerGoroutines = "goroutine-growth"
)

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

func (e *Event) setName(kind string, before bool, name string) {
	switch {
	case kind == session.KindHeap && before:
		e.Before = name
	case kind == session.KindHeap:
		e.After = name
	case before:
		e.BeforeGoroutine = name
	default:
		e.AfterGoroutine = name
	}
}

func (e Event) clone() Event {
	e.Values = maps.Clone(e.Values)
	return e
}
