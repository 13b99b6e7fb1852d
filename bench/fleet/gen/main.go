// Command gen writes the metrics a fleet of Go services would have published through
// client_golang's default Go and process collectors, as OpenMetrics text with timestamps for
// `promtool tsdb create-blocks-from openmetrics`, so that bench/fleet/run.sh can time
// memdoctor fleet against a real Prometheus holding an hour of 15 s scrapes of 200 targets.
// Each target gets a scenario (label "scenario"): most are healthy, some leak heap or
// goroutines at a steady rate, some run the GC often. With -check FILE it reads memdoctor
// fleet's JSON and prints, per scenario, what was found.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	targets := flag.Int("targets", 200, "number of targets")
	window := flag.Duration("window", time.Hour, "time covered")
	interval := flag.Duration("interval", 15*time.Second, "scrape interval")
	end := flag.Int64("end", 0, "Unix seconds of the last scrape (default: now, to the minute)")
	check := flag.String("check", "", "read memdoctor fleet's JSON from `FILE` and tally the verdicts by scenario")
	flag.Parse()
	if *check != "" {
		if err := tally(*check); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *end == 0 {
		*end = time.Now().Truncate(time.Minute).Unix()
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	write(w, *targets, time.Unix(*end, 0), *window, *interval)
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// target is one simulated service.
type target struct {
	instance, scenario string
	live, leak         float64 // bytes, bytes per second
	goroutines, gleak  float64 // count, per second
	gcRate, allocRate  float64 // per second, bytes per second
	cpu                float64 // cores
	phase              float64
}

func scenarios(n int) []target {
	out := make([]target, n)
	for i := range out {
		r := rand.New(rand.NewPCG(uint64(i), 42))
		t := target{
			instance:   fmt.Sprintf("10.1.%d.%d:8080", i/250, i%250+1),
			scenario:   "healthy",
			live:       float64(20+r.IntN(480)) * (1 << 20),
			goroutines: float64(20 + r.IntN(2000)),
			gcRate:     0.2 + r.Float64(),
			cpu:        0.05 + r.Float64(),
			phase:      r.Float64(),
		}
		switch i % 20 {
		case 0, 1:
			t.scenario, t.leak = "heap-leak", float64(10+r.IntN(190))*(1<<20)/3600
		case 2:
			t.scenario, t.gleak = "goroutine-leak", float64(300+r.IntN(2000))/3600
		case 3:
			t.scenario, t.gcRate = "gc-pressure", 5+5*r.Float64()
		}
		t.allocRate = t.gcRate * t.live
		out[i] = t
	}
	return out
}

// family is one metric family: its OpenMetrics type, sample name, and value at a time.
type family struct {
	name, typ, sample string
	value             func(t *target, secs float64, k int) float64
}

func families() []family {
	heap := func(t *target, secs float64, k int) (live, alloc float64) {
		live = t.live + t.leak*secs
		saw := math.Mod(t.phase+float64(k)*0.37, 1) // where in the GC sawtooth the scrape falls
		return live, live * (1 + saw)
	}
	g := func(t *target, secs float64) float64 { return math.Floor(t.goroutines + t.gleak*secs) }
	return []family{
		{"process_resident_memory_bytes", "gauge", "", func(t *target, s float64, k int) float64 {
			live, _ := heap(t, s, k)
			return 2.1*live + g(t, s)*8192 + 30<<20
		}},
		{"process_cpu_seconds", "counter", "_total", func(t *target, s float64, k int) float64 { return 3600*t.cpu + s*t.cpu }},
		{"process_start_time_seconds", "gauge", "", func(t *target, s float64, k int) float64 { return -3 * 3600 }}, // made absolute below
		{"go_goroutines", "gauge", "", func(t *target, s float64, k int) float64 { return g(t, s) }},
		{"go_memstats_heap_alloc_bytes", "gauge", "", func(t *target, s float64, k int) float64 { _, a := heap(t, s, k); return a }},
		{"go_memstats_heap_inuse_bytes", "gauge", "", func(t *target, s float64, k int) float64 { _, a := heap(t, s, k); return 1.05 * a }},
		{"go_memstats_next_gc_bytes", "gauge", "", func(t *target, s float64, k int) float64 { l, _ := heap(t, s, k); return 2*l + 200<<10 }},
		{"go_memstats_heap_idle_bytes", "gauge", "", func(t *target, s float64, k int) float64 { l, _ := heap(t, s, k); return 0.5 * l }},
		{"go_memstats_heap_released_bytes", "gauge", "", func(t *target, s float64, k int) float64 { l, _ := heap(t, s, k); return 0.3 * l }},
		{"go_memstats_heap_sys_bytes", "gauge", "", func(t *target, s float64, k int) float64 { l, _ := heap(t, s, k); return 2.6 * l }},
		{"go_memstats_stack_sys_bytes", "gauge", "", func(t *target, s float64, k int) float64 { return g(t, s)*8192 + 512<<10 }},
		{"go_memstats_sys_bytes", "gauge", "", func(t *target, s float64, k int) float64 {
			l, _ := heap(t, s, k)
			return 2.6*l + g(t, s)*8192 + 12<<20
		}},
		{"go_memstats_alloc_bytes", "counter", "_total", func(t *target, s float64, k int) float64 { return (3600 + s) * t.allocRate }},
		{"go_memstats_mallocs", "counter", "_total", func(t *target, s float64, k int) float64 { return (3600 + s) * t.allocRate / 64 }},
		{"go_gc_duration_seconds", "summary", "_count", func(t *target, s float64, k int) float64 { return math.Floor((3600 + s) * t.gcRate) }},
		{"go_gc_gogc_percent", "gauge", "", func(*target, float64, int) float64 { return 100 }},
		{"go_gc_gomemlimit_bytes", "gauge", "", func(*target, float64, int) float64 { return math.MaxInt64 }},
		{"go_sched_gomaxprocs_threads", "gauge", "", func(*target, float64, int) float64 { return 4 }},
		{"go_info", "gauge", "", func(*target, float64, int) float64 { return 1 }},
	}
}

func write(w *bufio.Writer, n int, end time.Time, window, interval time.Duration) {
	ts := scenarios(n)
	steps := int(window / interval)
	start := end.Add(-time.Duration(steps) * interval)
	for _, f := range families() {
		fmt.Fprintf(w, "# TYPE %s %s\n", f.name, f.typ)
		for i := range ts {
			t := &ts[i]
			labels := fmt.Sprintf(`{job="bench",instance=%q,scenario=%q`, t.instance, t.scenario)
			if f.name == "go_info" {
				labels += `,version="go1.26.1"`
			}
			labels += "}"
			for k := 0; k <= steps; k++ {
				at := start.Add(time.Duration(k) * interval)
				v := f.value(t, at.Sub(start).Seconds(), k)
				if f.name == "process_start_time_seconds" {
					v += float64(start.Unix())
				}
				fmt.Fprintf(w, "%s%s%s %g %d\n", f.name, f.sample, labels, v, at.Unix())
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
}

// tally prints, per scenario, how many targets had each finding at warning or above.
func tally(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc struct {
		Targets []struct {
			Labels   map[string]string `json:"labels"`
			Findings []struct {
				Kind, Severity string
			} `json:"findings"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	count := map[string]int{}
	found := map[string]map[string]int{}
	for _, t := range doc.Targets {
		sc := t.Labels["scenario"]
		count[sc]++
		if found[sc] == nil {
			found[sc] = map[string]int{}
		}
		for _, f := range t.Findings {
			if f.Severity == "warning" || f.Severity == "critical" {
				found[sc][f.Kind]++
			}
		}
	}
	var names []string
	for sc := range count {
		names = append(names, sc)
	}
	sort.Strings(names)
	for _, sc := range names {
		var parts []string
		for k, n := range found[sc] {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(parts)
		fmt.Printf("%-15s %3d targets; warnings: %s\n", sc, count[sc], strings.Join(parts, ", "))
	}
	return nil
}
