package report

import (
	"math"
	"slices"
)

// compareCharts lays each session's report charts over each other: resident memory (RSS), the
// heap, GC rate and CPU, and goroutines, each session's times counted from its own start.
func compareCharts(in CompareInput, buckets int) []Chart {
	o, n := in.Old, in.New
	return []Chart{
		overlay("memory", "Resident memory (RSS)", "RSS as /proc read it; the dashed grey line is OLD.",
			memoryChart(o, in.OldD, o.Start, buckets), memoryChart(n, in.NewD, n.Start, buckets), "RSS"),
		overlay("heap", "Heap: live and in use", "The live heap is what the last GC found reachable; the heap in use adds the garbage not yet collected. Grey is OLD.",
			heapChart(o, o.Start, buckets), heapChart(n, n.Start, buckets), "live heap", "heap in use (live + garbage)"),
		overlay("gc", "GC cycles per second and GC CPU", "Averaged over slices of each session. Grey is OLD.",
			gcChart(o, o.Start, min(buckets, maxRateBins)), gcChart(n, n.Start, min(buckets, maxRateBins)), "GC cycles/s", "GC CPU"),
		overlay("goroutines", "Goroutines", "Grey is OLD.",
			goroutinesChart(o, o.Start, buckets), goroutinesChart(n, n.Start, buckets), "goroutines"),
	}
}

// overlay makes one chart of the named series of two charts of the same kind: OLD's in grey
// and dashed, NEW's in their own colours, on the union of their times.
func overlay(id, title, caption string, old, cur Chart, names ...string) Chart {
	c := Chart{ID: id, Title: title, Caption: caption, Unit: cur.Unit, Unit2: cur.Unit2, Points: old.Points + cur.Points}
	if c.Unit == "" {
		c.Unit, c.Unit2 = old.Unit, old.Unit2
	}
	type picked struct {
		s  Series
		xs []float64
	}
	var ps []picked
	for k, ch := range []Chart{old, cur} {
		if ch.Empty != "" {
			continue
		}
		for j, name := range names {
			i := slices.IndexFunc(ch.Series, func(s Series) bool { return s.Name == name })
			if i < 0 {
				continue
			}
			s := ch.Series[i]
			s.Area = false
			// OLD is grey and NEW in colour; the first series of each is drawn plain
			// (OLD dashed), the second dotted, whatever their report's dashes.
			if k == 0 {
				s.Name, s.Color, s.Dash = "OLD "+s.Name, 8, [][]int{{6, 3}, {2, 3}}[min(j, 1)]
			} else {
				s.Name, s.Dash = "NEW "+s.Name, [][]int{nil, {8, 4}}[min(j, 1)]
				if s.Color == 9 { // the report's RSS is drawn in the text colour
					s.Color = 0
				}
			}
			ps = append(ps, picked{s, ch.X.v})
		}
	}
	if len(ps) == 0 {
		c.Empty = "Neither session has these figures."
		return c
	}
	var xs []float64
	for _, p := range ps {
		xs = append(xs, p.xs...)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	c.X = nums{xs, 3}
	for _, p := range ps {
		vals := make([]float64, len(xs))
		for i := range vals {
			vals[i] = math.NaN()
		}
		for j, x := range p.xs {
			if i, ok := slices.BinarySearch(xs, x); ok && j < len(p.s.Values.v) {
				vals[i] = p.s.Values.v[j]
			}
		}
		p.s.Values = nums{vals, p.s.Values.prec}
		c.Series = append(c.Series, p.s)
	}
	return c
}
