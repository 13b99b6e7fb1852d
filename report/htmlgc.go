package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
)

// maxGCMarks bounds the GC cycles drawn one by one; past it, one mark per time slice that had
// a cycle.
const maxGCMarks = 4000

// heapChart is the live heap against the GC's heap goal, with the heap in use (live plus
// garbage) between them and each GC cycle marked.
func heapChart(in *diagnose.Input, t0 time.Time, buckets int) Chart {
	c := Chart{ID: "heap", Title: "Heap: live against the GC goal", Unit: "bytes", MarksLabel: "GC cycle"}
	live, liveSrc := in.LiveHeap()
	goal := in.HeapGoal()
	var inuse []diagnose.Point
	for _, g := range in.Go {
		if g.HeapObjectsBytes > 0 {
			inuse = append(inuse, diagnose.Point{T: g.T, V: float64(g.HeapObjectsBytes)})
		}
	}
	c.Points = len(live) + len(goal) + len(inuse)
	if c.Points == 0 {
		c.Empty = "No heap figures in this session (no gctrace, pprof endpoint or agent)."
		return c
	}
	type line struct {
		name  string
		pts   []diagnose.Point
		color int
		dash  []int
	}
	var lines []line
	for _, l := range []line{
		{"heap in use (live + garbage)", inuse, 1, []int{2, 3}},
		{"live heap", live, 0, nil},
		{"heap goal", goal, 10, []int{8, 4}},
	} {
		if len(l.pts) > 0 {
			l.pts = downsamplePoints(l.pts, in.Start, in.End, buckets)
			lines = append(lines, l)
		}
	}
	series := make([][]diagnose.Point, len(lines))
	for i, l := range lines {
		series[i] = l.pts
	}
	xs, vals := join(series...)
	c.X = nums{secondsSince(t0, xs), 3}
	for i, l := range lines {
		c.Series = append(c.Series, Series{Name: l.name, Unit: "bytes", Color: l.color, Dash: l.dash, Values: nums{vals[i], 0}})
	}
	c.Caption = "The live heap is what the last GC found reachable"
	if liveSrc != "" {
		c.Caption += " (from " + liveSrc + ")"
	}
	c.Caption += "; the goal is the heap size at which the next GC starts (GOGC, GOMEMLIMIT); ticks along the bottom mark GC cycles."
	if len(in.GC) > 0 {
		m := gcMarks(in, t0, buckets)
		c.Marks = &m
	}
	return c
}

// gcMarks returns the GC cycles' times, or when there are too many to draw, the start of each
// time slice that had at least one.
func gcMarks(in *diagnose.Input, t0 time.Time, buckets int) nums {
	var out []float64
	if len(in.GC) <= maxGCMarks {
		for _, ev := range in.GC {
			out = append(out, ev.Time.Sub(t0).Seconds())
		}
		return nums{out, 3}
	}
	span := in.End.Sub(in.Start)
	last := -1
	for _, ev := range in.GC {
		b := int(float64(ev.Time.Sub(in.Start)) / float64(span) * float64(buckets))
		if b != last {
			out = append(out, ev.Time.Sub(t0).Seconds())
			last = b
		}
	}
	return nums{out, 3}
}

// bins are equal slices of the window for rates: GC cycles/s and GC CPU.
type bins struct {
	start time.Time
	width time.Duration
	n     int
}

// newBins cuts the window into at most maxN slices of at least minWidth.
func newBins(start, end time.Time, maxN int, minWidth time.Duration) bins {
	span := end.Sub(start)
	w := max(span/time.Duration(maxN), minWidth)
	n := int(span / w)
	if span-time.Duration(n)*w >= w/2 {
		n++ // a last slice of at least half a width stands alone; a shorter one joins the one before
	}
	return bins{start: start, width: w, n: max(n, 1)}
}

// of returns the slice that holds t (the last one runs to the window's end), or -1 before the
// window.
func (b bins) of(t time.Time) int {
	if t.Before(b.start) {
		return -1
	}
	return min(int(t.Sub(b.start)/b.width), b.n-1)
}

func (b bins) centers(t0, end time.Time) []float64 {
	out := make([]float64, b.n)
	for i := range out {
		out[i] = b.start.Add(time.Duration(i) * b.width).Add(b.widthOf(i, end) / 2).Sub(t0).Seconds()
	}
	return out
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// gcChart is the GC rate (cycles per second) and the share of CPU the GC takes, with the
// share spent in mark assists apart, averaged over equal slices of the window.
func gcChart(in *diagnose.Input, t0 time.Time, maxBins int) Chart {
	c := Chart{ID: "gc", Title: "GC cycles per second and GC CPU", Unit: "per_second", Unit2: "fraction"}
	b := newBins(in.Start, in.End, maxBins, rateWidth(in))
	var rate, cpu, assist []float64
	var cpuName, source string
	switch {
	case len(in.GC) > 0:
		rate, cpu, assist = gcFromTrace(in, b)
		cpuName, source = "GC CPU", "gctrace"
		c.Points = len(in.GC)
	case len(in.Go) >= 2:
		rate, cpu, assist, cpuName = gcFromCounters(in, b)
		source = in.Go[len(in.Go)-1].Source
		c.Points = len(in.Go)
	default:
		c.Empty = "No GC figures in this session (no gctrace and fewer than two readings of the Go runtime)."
		return c
	}
	c.X = nums{b.centers(t0, in.End), 3}
	c.Series = append(c.Series, Series{Name: "GC cycles/s", Unit: "per_second", Color: 2, Values: nums{rate, 4}})
	if cpu != nil {
		c.Series = append(c.Series, Series{Name: cpuName, Unit: "fraction", Axis: 1, Color: 3, Dash: []int{8, 4}, Values: nums{cpu, 5}})
	}
	if assist != nil {
		c.Series = append(c.Series, Series{Name: "GC CPU in mark assists", Unit: "fraction", Axis: 1, Color: 4, Dash: []int{2, 3}, Values: nums{assist, 5}})
	}
	c.Caption = fmt.Sprintf("Averaged over %s slices, from %s. GC CPU is the share of all CPU time (GOMAXPROCS × wall time) "+
		"the collector took; mark assists are the part that request goroutines paid for.", Duration(b.width), source)
	return c
}

// rateWidth is the shortest slice that averages GC rates without aliasing: ten times the
// median time between cycles, within [2 s, a thirtieth of the window].
func rateWidth(in *diagnose.Input) time.Duration {
	const floor = 2 * time.Second
	var gaps []time.Duration
	for i := 1; i < len(in.GC); i++ {
		gaps = append(gaps, in.GC[i].Time.Sub(in.GC[i-1].Time))
	}
	if len(gaps) == 0 {
		return floor
	}
	slices.Sort(gaps)
	w := min(10*gaps[len(gaps)/2], in.End.Sub(in.Start)/30)
	return max(w, floor)
}

// gcFromTrace bins gctrace cycles: each counts, with its CPU, in the slice where it began.
func gcFromTrace(in *diagnose.Input, b bins) (rate, cpu, assist []float64) {
	count := make([]float64, b.n)
	gcCPU := make([]float64, b.n)
	asst := make([]float64, b.n)
	procs := 1
	for _, ev := range in.GC {
		i := b.of(ev.Time)
		if i < 0 {
			continue
		}
		count[i]++
		gcCPU[i] += ev.GCCPU().Seconds()
		asst[i] += ev.CPUAssist.Seconds()
		if ev.Procs > 0 {
			procs = ev.Procs
		}
	}
	rate, cpu, assist = make([]float64, b.n), make([]float64, b.n), make([]float64, b.n)
	for i := range b.n {
		w := b.widthOf(i, in.End).Seconds()
		if w <= 0 {
			rate[i], cpu[i], assist[i] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		rate[i] = count[i] / w
		cpu[i] = gcCPU[i] / (w * float64(procs))
		assist[i] = asst[i] / (w * float64(procs))
	}
	return rate, cpu, assist
}

// widthOf is the length of slice i; the last one ends at the window's end.
func (b bins) widthOf(i int, end time.Time) time.Duration {
	from := b.start.Add(time.Duration(i) * b.width)
	if i == b.n-1 {
		return end.Sub(from)
	}
	return b.width
}

// gcFromCounters derives the rates from the runtime's cumulative counters: each interval
// between two readings counts in the slice where it ends. With runtime/metrics the GC CPU is
// exact; MemStats only has GCCPUFraction since the process started, which is shown as such.
func gcFromCounters(in *diagnose.Input, b bins) (rate, cpu, assist []float64, cpuName string) {
	dt, dgc := make([]float64, b.n), make([]float64, b.n)
	dcpu, dgcCPU, dassist := make([]float64, b.n), make([]float64, b.n), make([]float64, b.n)
	since := nanSlice(b.n)
	for k := 1; k < len(in.Go); k++ {
		prev, cur := in.Go[k-1], in.Go[k]
		i := b.of(cur.T)
		if i < 0 || cur.GCCycles < prev.GCCycles { // a restart resets the counters
			continue
		}
		dt[i] += cur.T.Sub(prev.T).Seconds()
		dgc[i] += float64(cur.GCCycles - prev.GCCycles)
		if cur.CPUTotalSeconds > prev.CPUTotalSeconds {
			dcpu[i] += cur.CPUTotalSeconds - prev.CPUTotalSeconds
			dgcCPU[i] += (cur.GCTotalSeconds - cur.GCIdleSeconds) - (prev.GCTotalSeconds - prev.GCIdleSeconds)
			dassist[i] += cur.GCAssistSeconds - prev.GCAssistSeconds
		}
		if cur.GCCPUFraction > 0 {
			since[i] = cur.GCCPUFraction
		}
	}
	rate, cpu, assist = nanSlice(b.n), nanSlice(b.n), nanSlice(b.n)
	exact := false
	for i := range b.n {
		if dt[i] > 0 {
			rate[i] = dgc[i] / dt[i]
		}
		if dcpu[i] > 0 {
			cpu[i] = max(dgcCPU[i], 0) / dcpu[i]
			assist[i] = max(dassist[i], 0) / dcpu[i]
			exact = true
		}
	}
	if exact {
		return rate, cpu, assist, "GC CPU"
	}
	return rate, since, nil, "GC CPU since the process started (MemStats)"
}

// goroutinesChart is the number of goroutines over time.
func goroutinesChart(in *diagnose.Input, t0 time.Time, buckets int) Chart {
	c := Chart{ID: "goroutines", Title: "Goroutines", Unit: "count"}
	var pts []diagnose.Point
	for _, g := range in.Go {
		if g.Goroutines > 0 {
			pts = append(pts, diagnose.Point{T: g.T, V: float64(g.Goroutines)})
		}
	}
	c.Points = len(pts)
	if len(pts) == 0 {
		c.Empty = "No goroutine counts in this session."
		return c
	}
	pts = downsamplePoints(pts, in.Start, in.End, buckets)
	xs, vals := join(pts)
	c.X = nums{secondsSince(t0, xs), 3}
	c.Series = []Series{{Name: "goroutines", Unit: "count", Color: 5, Values: nums{vals[0], 0}}}
	c.Caption = "A count that only climbs, and does not come back down when the load does, is a goroutine leak."
	return c
}
