package rule

import "math"

// pacer models the Go GC's heap goal (runtime/mgcpacer.go, Go 1.18+):
//
//	GOGC goal  = live + (live + stacks + globals) x GOGC/100, at least 4 MiB x GOGC/100
//	limit goal = GOMEMLIMIT - non-heap runtime memory - max(3% of the limit, 1 MiB), at least live
//
// The runtime uses the smaller goal; with GOGC=off only the limit's. The GC then runs about
// alloc rate / (goal - live) times per second.
type pacer struct {
	live    float64 // /gc/heap/live
	scan    float64 // stacks + globals the GC scans
	gogc    float64 // percent; < 0 = off
	limit   float64 // GOMEMLIMIT bytes; 0 = none
	nonHeap float64 // the runtime's non-heap memory: stacks, metadata, other
}

func (p pacer) goal() float64 {
	goal := math.Inf(1)
	if p.gogc >= 0 {
		goal = math.Max(p.live+(p.live+p.scan)*p.gogc/100, 4<<20*p.gogc/100)
	}
	if p.limit > 0 {
		lg := p.limit - p.nonHeap - math.Max(0.03*p.limit, 1<<20)
		goal = math.Min(goal, math.Max(lg, p.live))
	}
	return goal
}

// gcRate is the GC cycles per second at an allocation rate.
func (p pacer) gcRate(alloc float64) float64 {
	room := p.goal() - p.live
	if room <= 0 || math.IsInf(room, 1) {
		if math.IsInf(room, 1) {
			return 0
		}
		return math.Inf(1)
	}
	return alloc / room
}

// gogcFor is the largest GOGC whose goal leaves at most room above the live heap, the
// 4 MiB x GOGC/100 floor included.
func (p pacer) gogcFor(room float64) float64 {
	return math.Min(100*room/math.Max(p.live+p.scan, 1), 100*(p.live+room)/(4<<20))
}
