package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// stat is a median with its spread, benchstat-style: "± x%" is the larger distance from the
// median to the min or the max, as a share of the median.
type stat struct {
	median, spread float64
}

func summarize(vals []float64) stat {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	spread := 0.0
	if med != 0 {
		spread = max(med-v[0], v[n-1]-med) / med
	}
	return stat{med, spread}
}

func (s stat) format(unit string, prec int) string {
	return fmt.Sprintf("%.*f%s ± %.0f%%", prec, s.median, unit, 100*s.spread)
}

func delta(s, base stat) string {
	if base.median == 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100*(s.median/base.median-1))
}

// printTable prints the comparison as a Markdown table.
func printTable(w io.Writer, names []string, results map[string][]run, runs, requests, conc int) {
	col := func(name string, f func(run) float64) stat {
		var v []float64
		for _, r := range results[name] {
			v = append(v, f(r))
		}
		return summarize(v)
	}
	tput := func(r run) float64 { return r.load.throughput() }
	p50 := func(r run) float64 { return ms(r.load.P50) }
	p99 := func(r run) float64 { return ms(r.load.P99) }
	cpu := func(r run) float64 { return r.server.CPUSeconds }
	rss := func(r run) float64 { return float64(r.server.PeakRSSBytes) / 1e6 }
	base := names[0]
	fmt.Fprintf(w, "%s, %s/%s, GOMAXPROCS %d, %s: %d runs per configuration of %d requests, %d clients; median ± spread (Δ vs %s)\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.Version(), runs, requests, conc, base)
	fmt.Fprintln(w, "| configuration | throughput (req/s) | p50 latency | p99 latency | CPU seconds | peak RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, name := range names {
		cells := []string{name}
		for _, c := range []struct {
			f     func(run) float64
			unit  string
			prec  int
			delta bool
		}{{tput, "", 0, true}, {p50, " ms", 2, true}, {p99, " ms", 2, true}, {cpu, " s", 2, true}, {rss, " MB", 1, false}} {
			s := col(name, c.f)
			cell := s.format(c.unit, c.prec)
			if name != base {
				b := col(base, c.f)
				if c.delta {
					cell += " (" + delta(s, b) + ")"
				} else {
					cell += fmt.Sprintf(" (%+.1f MB)", s.median-b.median)
				}
			}
			cells = append(cells, cell)
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
}
