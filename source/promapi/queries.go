package promapi

import "fmt"

// quantity is what one query reads for every target.
type quantity uint8

// The quantities read: the canonical series first, then what only the pacer and the split
// of memory need.
const (
	qRSS quantity = iota
	qHeapInUse
	qHeapGoal
	qHeapFree
	qRuntimeResident
	qStacks
	qGoroutines
	qGCCycles
	qAllocBytes
	qAllocObjects
	qProcessCPU
	qRetainedShare // free heap over RSS, where both were read in one scrape
	qHeapUnused
	qHeapReleased
	qNonHeap // stacks, runtime metadata and other: total less the heap
	qStart
	qGOGC
	qGOMemLimit
	qGOMAXPROCS
	qInfo
	// Opt-in runtime/metrics (collectors.WithGoCollectorRuntimeMetrics), and older clients.
	qLive
	qGCCPU
	qGCAssist
	qAvailableCPU
	qGCForced
	qScan
	qGCCPUFraction
	qLastGC
	nQuantities
)

// query is one PromQL expression, its %[1]s standing for the targets' selector.
type query struct {
	q       quantity
	expr    string
	counter bool
	quantum float64
	// setting: a value that seldom changes (the start time, GOGC): only its changes are kept.
	setting bool
}

// queries are the range queries issued for each group of targets, one per quantity.
var queries = []query{
	{q: qRSS, expr: "process_resident_memory_bytes%[1]s"},
	{q: qHeapInUse, expr: "go_memstats_heap_alloc_bytes%[1]s"},
	{q: qHeapGoal, expr: "go_memstats_next_gc_bytes%[1]s"},
	{q: qHeapFree, expr: "go_memstats_heap_idle_bytes%[1]s - go_memstats_heap_released_bytes%[1]s"},
	{q: qRuntimeResident, expr: "go_memstats_sys_bytes%[1]s - go_memstats_heap_released_bytes%[1]s"},
	{q: qStacks, expr: "go_memstats_stack_sys_bytes%[1]s"},
	{q: qGoroutines, expr: "go_goroutines%[1]s", quantum: 1},
	{q: qGCCycles, expr: "go_gc_duration_seconds_count%[1]s", counter: true},
	{q: qAllocBytes, expr: "go_memstats_alloc_bytes_total%[1]s", counter: true},
	{q: qAllocObjects, expr: "go_memstats_mallocs_total%[1]s", counter: true},
	{q: qProcessCPU, expr: "process_cpu_seconds_total%[1]s", counter: true},
	{q: qRetainedShare, expr: "(go_memstats_heap_idle_bytes%[1]s - go_memstats_heap_released_bytes%[1]s) / process_resident_memory_bytes%[1]s"},
	{q: qHeapUnused, expr: "go_memstats_heap_inuse_bytes%[1]s - go_memstats_heap_alloc_bytes%[1]s"},
	{q: qHeapReleased, expr: "go_memstats_heap_released_bytes%[1]s"},
	{q: qNonHeap, expr: "go_memstats_sys_bytes%[1]s - go_memstats_heap_sys_bytes%[1]s"},
	{q: qStart, expr: "process_start_time_seconds%[1]s", setting: true},
	{q: qGOGC, expr: "go_gc_gogc_percent%[1]s", setting: true},
	{q: qGOMemLimit, expr: "go_gc_gomemlimit_bytes%[1]s", setting: true},
	{q: qGOMAXPROCS, expr: "go_sched_gomaxprocs_threads%[1]s", setting: true},
	{q: qInfo, expr: "go_info%[1]s"},
	{q: qLive, expr: "go_gc_heap_live_bytes%[1]s"},
	{q: qGCCPU, expr: "go_cpu_classes_gc_total_cpu_seconds_total%[1]s - go_cpu_classes_gc_mark_idle_cpu_seconds_total%[1]s", counter: true},
	{q: qGCAssist, expr: "go_cpu_classes_gc_mark_assist_cpu_seconds_total%[1]s", counter: true},
	{q: qAvailableCPU, expr: "go_cpu_classes_total_cpu_seconds_total%[1]s", counter: true},
	{q: qGCForced, expr: "go_gc_cycles_forced_gc_cycles_total%[1]s", counter: true},
	{q: qScan, expr: "go_gc_scan_stack_bytes%[1]s + go_gc_scan_globals_bytes%[1]s"},
	{q: qGCCPUFraction, expr: "go_memstats_gc_cpu_fraction%[1]s"},
	{q: qLastGC, expr: "go_memstats_last_gc_time_seconds%[1]s"},
}

// promql returns the query's expression for a selector ("" or "{...}").
func (q query) promql(sel string) string { return fmt.Sprintf(q.expr, sel) }

// signed reports a quantity whose negative readings mean something (GOGC=off is -1).
func (q quantity) signed() bool { return q == qGOGC }
