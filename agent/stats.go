package agent

import (
	"runtime/debug"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/agent/wire"
)

// Info describes the agent and its process: the body of GET /debug/memdoctor/.
type Info = wire.Info

// Version of the HTTP contract served under /debug/memdoctor/.
const Version = wire.Version

func (a *Agent) staticInfo(budget uint64) Info {
	in := Info{
		Agent:                  "memdoctor",
		Version:                Version,
		PID:                    a.cfg.pid,
		GoVersion:              goVersion(),
		Start:                  a.start.UTC(),
		SampleIntervalSeconds:  a.cfg.sampleInterval.Seconds(),
		HistorySeconds:         a.cfg.history.Seconds(),
		ProfileIntervalSeconds: a.cfg.profileInterval.Seconds(),
		GOMemLimitSource:       a.memLimit.source,
		BudgetBytes:            budget,
		BudgetSource:           a.budgetSrc,
		FlightRecorder:         a.flight != nil,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		in.MainModule = bi.Main.Path
		if in.MainModule == "" {
			in.MainModule = bi.Path
		}
	}
	return in
}

// Info returns what GET /debug/memdoctor/ serves.
func (a *Agent) Info() Info {
	in := a.info
	in.GOMemLimitBytes = currentMemLimit()
	in.Samples = a.ring.len()
	in.Oldest = a.ring.oldest()
	in.Pressure = a.guard.current()
	in.ProfileBytes = a.store.heldBytes()
	return in
}

// Stats are memdoctor's derived figures at the latest sample.
type Stats struct {
	Time      time.Time    `json:"time"`
	Breakdown breakdown.At `json:"breakdown"`
	// Over the last minute (or since Start when shorter):
	GCPerSecond float64 `json:"gc_per_second"`
	// GCCPUFraction is the GC's share of the CPU available to Go (GOMAXPROCS x wall time),
	// GCAssistCPUFraction the part of it spent in mark assists by allocating goroutines.
	GCCPUFraction       float64        `json:"gc_cpu_fraction"`
	GCAssistCPUFraction float64        `json:"gc_assist_cpu_fraction"`
	AllocBytesPerSecond float64        `json:"alloc_bytes_per_second"`
	Pressure            Pressure       `json:"pressure"`
	Events              map[string]int `json:"events"` // trigger -> events since Start
}

// statsWindow is the span the rates are computed over.
const statsWindow = time.Minute

// Stats returns the derived figures at the latest sample (zero before the first one).
func (a *Agent) Stats() Stats {
	var cur, old slot
	if !a.ring.latest(&cur) {
		return Stats{Events: a.store.eventCounts()}
	}
	st := Stats{
		Time:      cur.t,
		Breakdown: a.breakdownOf(&cur),
		Pressure:  a.guard.current(),
		Events:    a.store.eventCounts(),
	}
	if !a.ring.at(cur.t.Add(-statsWindow), &old) {
		seq, _ := a.ring.firstAfter(time.Time{})
		a.ring.get(seq, &old)
	}
	if dt := cur.t.Sub(old.t).Seconds(); dt > 0 && cur.hasGo && old.hasGo {
		g, o := &cur.gomem, &old.gomem
		st.GCPerSecond = float64(g.GCCycles-o.GCCycles) / dt
		st.AllocBytesPerSecond = float64(g.AllocBytesTotal-o.AllocBytesTotal) / dt
		if cpu := g.CPUTotalSeconds - o.CPUTotalSeconds; cpu > 0 {
			st.GCCPUFraction = (g.GCTotalSeconds - o.GCTotalSeconds) / cpu
			st.GCAssistCPUFraction = (g.GCAssistSeconds - o.GCAssistSeconds) / cpu
		}
	}
	return st
}

// Breakdown returns where the process's resident memory goes at the latest sample.
func (a *Agent) Breakdown() breakdown.At {
	var cur slot
	if !a.ring.latest(&cur) {
		return breakdown.At{}
	}
	return a.breakdownOf(&cur)
}

func (a *Agent) breakdownOf(s *slot) breakdown.At {
	smp := s.sample()
	b := breakdown.Compute(smp.Time, smp.Proc, smp.Go, 0, "")
	b.SetLimits(smp.Cgroup, a.info.BudgetBytes)
	return b
}
