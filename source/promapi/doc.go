// Package promapi reads the metrics a fleet of Go services already publishes through
// Prometheus's HTTP API (or any compatible one: Thanos, Mimir, VictoriaMetrics) and builds
// one evidence.Evidence per target, so that the same rules judge them as judge a memdoctor
// session.
//
// It finds every target that exports client_golang's standard Go collector (go_goroutines
// with the caller's label selector), then issues one range query per quantity for all of
// them (for a group of them when the fleet and the window are large, so that memory stays
// bounded), at the targets' scrape interval. It reads raw readings, never rate(): gauges
// become the canonical series as they are, counters go through the evidence builders, which
// keep them monotonic across restarts.
//
// The mapping, from client_golang v1.24's default Go and process collectors:
//
//	process_resident_memory_bytes                    RSS
//	go_memstats_heap_alloc_bytes                     HeapInUse (live + garbage: leaks are judged on its floor)
//	go_memstats_next_gc_bytes                        HeapGoal
//	go_memstats_heap_idle_bytes - heap_released      HeapFree, and its share of RSS (the aligned readings)
//	go_memstats_sys_bytes - heap_released            RuntimeResident
//	go_memstats_stack_sys_bytes                      Stacks (goroutine and OS thread stacks)
//	go_goroutines                                    Goroutines
//	go_gc_duration_seconds_count                     GCCycles (counter)
//	go_memstats_alloc_bytes_total, mallocs_total     AllocBytes, AllocObjects (counters)
//	process_cpu_seconds_total                        ProcessCPU (counter)
//	process_start_time_seconds                       Target.Started, Restarts
//	go_gc_gogc_percent, go_gc_gomemlimit_bytes,
//	go_sched_gomaxprocs_threads, go_memstats_sys_bytes - heap_sys   the pacer's inputs
//	go_info{version}                                 Target.GoVersion
//
// When a service also exposes runtime/metrics through the collector's options
// (collectors.WithGoCollectorRuntimeMetrics), these are used as well: go_gc_heap_live_bytes
// (Live), the /cpu/classes/gc/* counters (GCCPU, GCAssist, AvailableCPU),
// go_gc_cycles_forced_gc_cycles_total (GCForced) and the stack and globals scan sizes; older
// client_golang versions' go_memstats_gc_cpu_fraction gives GC CPU with the process's start
// time and GOMAXPROCS. What the standard metrics cannot show is recorded in Evidence.Gaps, for
// the rules to quote: the GC's CPU time (go_gc_duration_seconds counts only stop-the-world
// pauses), the anonymous and LazyFree parts of RSS (so memory outside Go cannot be told from
// the binary and mapped files), heap and goroutine profiles, and a memory limit.
//
// Everything the API sends is checked: response bodies are bounded, values that are not
// finite or are negative are dropped, and readings outside the window are ignored.
package promapi
