package agent

import (
	"maps"

	"github.com/memdoctor/memdoctor/agent/wire"

	"github.com/memdoctor/memdoctor/agent/record"
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
type Event = wire.Event

// setEventName records a profile kept around e.
func setEventName(e *Event, kind string, before bool, name string) {
	switch {
	case kind == record.KindHeap && before:
		e.Before = name
	case kind == record.KindHeap:
		e.After = name
	case before:
		e.BeforeGoroutine = name
	default:
		e.AfterGoroutine = name
	}
}

func cloneEvent(e Event) Event {
	e.Values = maps.Clone(e.Values)
	return e
}
