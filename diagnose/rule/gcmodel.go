package rule

import (
	"math"

	"github.com/memdoctor/memdoctor/facts"
)

// GCModel is the GC pacer model the gc-overhead advice predicts from, calibrated on a
// session: the live heap, the allocation rate and the runtime's memory outside the heap as
// measured, and the ratio of the measured GC rate to the modelled one. memdoctor tune uses it
// to propose GOGC and GOMEMLIMIT settings for a memory budget and to predict their effect.
type GCModel struct {
	LiveBytes           float64 `json:"live_heap_bytes"`           // the live heap's median
	ScanBytes           float64 `json:"scan_stacks_globals_bytes"` // stacks and globals the GC scans
	NonHeapBytes        float64 `json:"non_heap_bytes"`            // the runtime's memory outside the heap
	OutsideBytes        float64 `json:"outside_go_bytes"`          // resident memory outside Go: non-Go, files
	AllocBytesPerSecond float64 `json:"alloc_bytes_per_second"`
	// GOGC and GOMemLimit are the settings it ran with (GOGC < 0: off; GOMemLimit 0: none).
	GOGC       float64 `json:"gogc"`
	GOMemLimit float64 `json:"gomemlimit_bytes,omitempty"`
	// Calibration is the measured GC rate over the modelled one, within [0.5, 2]: predictions
	// are multiplied by it.
	Calibration float64 `json:"calibration"`
	// GCPerSecond is the GC rate measured (forced cycles left out).
	GCPerSecond float64 `json:"gc_per_second"`

	m  gcModel
	th GC
}

// GCPrediction is what the model predicts for a setting.
type GCPrediction struct {
	GCPerSecond   float64 `json:"gc_per_second"`
	HeapGoalBytes float64 `json:"heap_goal_bytes"`
	// RSSPeakBytes is the heap goal plus the runtime's other memory and memory outside Go.
	RSSPeakBytes float64 `json:"rss_peak_bytes"`
}

// ModelGC builds the pacer model from a session's summary, its GC's cadence and its pacer
// settings; false when the live heap or the allocation rate is unknown.
func ModelGC(sum facts.Summary, gc facts.GC, p facts.Pacer, th *Thresholds) (GCModel, bool) {
	m, ok := gcModelOf(gc, p, sum)
	if !ok {
		return GCModel{}, false
	}
	return GCModel{
		LiveBytes: m.now.live, ScanBytes: m.now.scan, NonHeapBytes: m.now.nonHeap, OutsideBytes: m.outside,
		AllocBytesPerSecond: m.alloc, GOGC: m.now.gogc, GOMemLimit: m.now.limit, Calibration: m.calibrate,
		GCPerSecond: sum.GCPerSecond, m: m, th: th.GC,
	}, true
}

// Predict is the model's prediction for GOGC (percent; < 0 = off) and a memory limit in bytes
// (0 = none).
func (g GCModel) Predict(gogc, limit float64) GCPrediction {
	p := g.m.now
	p.gogc, p.limit = gogc, limit
	goal := p.goal()
	rate := p.gcRate(g.m.alloc) * g.m.calibrate
	if math.IsInf(goal, 1) { // GOGC=off without a limit: the heap grows without a GC
		return GCPrediction{GCPerSecond: 0, HeapGoalBytes: goal, RSSPeakBytes: goal}
	}
	return GCPrediction{GCPerSecond: rate, HeapGoalBytes: goal, RSSPeakBytes: goal + p.nonHeap + g.m.outside}
}

// GOGCFor is the largest GOGC whose heap goal leaves at most room bytes above the live heap.
func (g GCModel) GOGCFor(room float64) float64 { return g.m.now.gogcFor(room) }

// Advice is the gc-overhead rule's recommendation for a memory budget whose share (0..1) the
// resident memory may reach: a GOGC sized for the rule's target GC rate and a GOMEMLIMIT that
// caps the heap (0 without a budget). fits is false when the budget leaves the heap no room.
func (g GCModel) Advice(budget uint64, share float64) (gogc, limit float64, fits bool) {
	rec, fits := g.m.recommend(g.GCPerSecond, budget, share, &g.th)
	return rec.gogc, rec.limit, fits
}

// gcModel is the pacer as measured, calibrated against the measured GC rate.
type gcModel struct {
	now       pacer
	alloc     float64 // bytes per second
	outside   float64 // resident memory outside Go (non-Go, files)
	rateNow   float64 // GC cycles per second the model predicts for the current settings
	calibrate float64 // measured over modelled, within [0.5, 2]
	rssPeak   float64 // the peak RSS measured
}

func gcModelOf(gc facts.GC, p facts.Pacer, sum facts.Summary) (gcModel, bool) {
	live, alloc := gc.MedianLive, gc.AllocRate
	if live <= 0 || alloc <= 0 {
		return gcModel{}, false
	}
	gogc := p.GOGC
	if gogc == 0 {
		gogc = 100
	}
	m := gcModel{
		now:   pacer{live: live, scan: p.ScanBytes, gogc: gogc, limit: p.GOMemLimit, nonHeap: p.NonHeap},
		alloc: alloc, outside: p.Outside, calibrate: 1, rssPeak: float64(sum.RSSPeakBytes),
	}
	m.rateNow = m.now.gcRate(alloc)
	if m.rateNow > 0 && !math.IsInf(m.rateNow, 0) {
		m.calibrate = math.Min(math.Max(sum.GCPerSecond/m.rateNow, 0.5), 2)
	}
	return m, true
}

// recommend picks settings with enough room above the live heap for the target GC rate,
// capped by a memory limit that keeps RSS within share of the budget. fits is false when the
// budget leaves no such room.
func (m gcModel) recommend(gcPerSecond float64, budget uint64, share float64, th *GC) (rec pacer, fits bool) {
	live, nonHeap := m.now.live, m.now.nonHeap
	room := m.alloc / math.Min(th.TargetRate, th.TargetShare*gcPerSecond)
	if budget == 0 {
		// No budget: do not let the advice multiply memory use; grow at most to four times
		// today's peak resident memory (or 64 MiB).
		room = math.Min(room, math.Max(4*m.rssPeak, 64<<20)-live-nonHeap-m.outside)
	}
	rec = pacer{live: live, scan: m.now.scan, nonHeap: nonHeap, gogc: math.Min(m.now.gogcFor(room), th.MaxGOGC)}
	if budget > 0 {
		rec.limit = math.Floor((share*float64(budget)-m.outside)/(1<<20)) * (1 << 20)
		if rec.limit < 1.5*(live+nonHeap) {
			return rec, false
		}
		rec.gogc = math.Min(rec.gogc, rec.gogcFor(rec.goal()-live)) // no point beyond the limit
	}
	rec.gogc = math.Max(100, roundDown(rec.gogc, 50))
	if m.now.gogc > rec.gogc {
		rec.gogc = m.now.gogc
	}
	return rec, true
}

func roundDown(v, step float64) float64 { return math.Floor(v/step) * step }
