// Package agent is memdoctor's in-process watchdog: a service embeds it in one line and it
// captures, from inside, what an outside collector cannot see in time: the heap profile from
// just before a spike, the runtime's own figures every second for the last hour, a flight
// recording of the mark assists that slowed requests. It also guards the service: pressure
// levels the application can shed load on, GOMEMLIMIT from the cgroup limit, and an optional
// orderly exit, with the evidence written to disk, instead of the kernel's OOM kill.
//
//	a, err := agent.Start(ctx)
//	...
//	mux.Handle("/debug/memdoctor/", a.Handler())
//
// or, configured by environment variables, import _ "github.com/memdoctor/memdoctor/agent/auto".
// `memdoctor watch URL` finds the endpoint and copies the agent's whole history into its
// session, including what happened before anyone attached.
//
// # What it does
//
// Every second (WithSampleInterval) the agent reads runtime/metrics (one metrics.Read into a
// slice allocated once: memory classes, live heap, goal, scan sizes, allocations, GC cycles,
// GC CPU with mark assists apart, pauses, goroutines, GOGC, GOMEMLIMIT, GOMAXPROCS) and
// /proc/self (RSS, RssAnon/File/Shmem, LazyFree, CPU), and every 10s its memory cgroup,
// into a ring allocated once at Start, outside the Go heap, that holds an hour (WithHistory).
// It never calls runtime.ReadMemStats, and forces no GC but the goroutineleak profile's.
//
// Every 15s (WithProfileInterval) it takes a heap and a goroutine profile into a ring of the
// last 8 rounds (WithProfileRounds). When the runtime has the goroutineleak profile (Go 1.27;
// Go 1.26 built with GOEXPERIMENT=goroutineleakprofile), the agent takes one at Start, when
// the goroutine count climbs (by the goroutine-growth margins below, since the last one) and
// every 10 minutes (WithLeakCheckInterval), never two within a minute, and keeps the last 4:
// each proves, from one snapshot, the goroutines blocked forever on something no running
// goroutine can reach, and costs one forced GC cycle with leak detection. Triggers decide
// when to keep more:
//
//   - heap-jump: at the end of a GC, the live heap or the heap goal is 50% and 16 MiB above
//     the lowest of the last minute's GCs (WithHeapJump). The agent learns of each GC through
//     a cleanup on an unreachable sentinel object: no polling, no stop-the-world.
//   - rss-threshold: RSS rises through a threshold (WithRSSThreshold; by default the high
//     pressure threshold of the budget, and off without a budget).
//   - goroutine-growth: 1000 more goroutines, and 50% more, than the last minute's lowest
//     (WithGoroutineGrowth).
//
// Each trigger then waits out a cooldown (WithCooldown, 5m). A firing keeps a before/after
// pair beyond the ring's rotation: "before" is the newest periodic round taken before the
// rise began, labelled "before-<trigger>"; "after" is taken once the rise stops (the first
// GC whose heap is not above the previous one, or sample whose RSS or goroutine count is
// not), at most 10s after the event (WithAfterWindow), labelled "after-<trigger>". Heap
// profiles count allocations as of the last completed GC, so the difference of the pair's
// alloc_space is what was allocated across the whole spike, which `memdoctor analyze`
// attributes to code. With WithFlightRecorder, a runtime/trace flight recorder (Go 1.25+)
// runs all along and is snapshotted with the "after" profiles; memdoctor reports from it
// how long goroutines spent in mark assists during the spike and which ones paid.
//
// Everything kept is bounded: samples by the ring, profiles by count and by bytes
// (WithProfileBytes, 32 MiB), events by count (WithKeptEvents), traces by count and the
// flight recorder's size. The agent recovers its own panics and those of the code it is
// given (a pressure callback, a log handler), never blocks the application (pressure is
// delivered without waiting for the reader), and Stop releases every goroutine it started;
// it waits for a pressure callback that does not return only as long as its context allows
// (one second without a deadline; see Agent.Stop).
//
// # Memory limit and guard
//
// WithMemoryLimitFromCgroup(0.9) sets GOMEMLIMIT to 90% of the effective cgroup limit (v1 or
// v2, limits of parent cgroups included), unless the user set GOMEMLIMIT (environment or
// debug.SetMemoryLimit); the Go runtime never reads the cgroup memory limit itself.
//
// The guard compares the process's RSS with the budget (WithBudget, else the cgroup limit):
// PressureHigh at 80% and PressureCritical at 95% (WithPressureThresholds), delivered through
// Pressure() (a channel that always holds the latest change) and WithPressureFunc, so the
// application can drop optional work or refuse requests. With WithExitOnHardLimit, usage held
// at the hard limit (WithHardLimit; default the critical threshold) for 10s makes the agent
// write a session directory (manifest, metrics history, profiles, traces, and a
// diagnosis.json with the breakdown and the pressure history: the agent does not carry the
// diagnosis engine, `memdoctor analyze DIR` diagnoses it in full), log one line at Error
// level and exit with status 12 (WithExitStatus; 12 is ENOMEM).
//
// # HTTP contract (version 1)
//
// Handler serves, under /debug/memdoctor/, GET (and HEAD) only:
//
//	/debug/memdoctor/                  JSON Info: {"agent":"memdoctor","version":1,"pid",
//	                                   "go_version","main_module","start",
//	                                   "sample_interval_seconds","history_seconds",
//	                                   "profile_interval_seconds","gomemlimit_bytes",
//	                                   "gomemlimit_source","budget_bytes","budget_source",
//	                                   "flight_recorder","samples","oldest","pressure",
//	                                   "profile_bytes"}
//	/debug/memdoctor/metrics?since=T   JSON lines, one session.Sample each, taken after T
//	                                   (RFC 3339, nanoseconds allowed; all held when absent),
//	                                   oldest first, streamed
//	/debug/memdoctor/profiles          JSON list of ProfileInfo: [{"name","kind","time",
//	                                   "label","size"}]; kind is "heap", "goroutine" or
//	                                   "goroutineleak"; label is "" for periodic snapshots,
//	                                   "before-<trigger>" and "after-<trigger>" for the
//	                                   pairs kept around events
//	/debug/memdoctor/profiles/NAME     the profile as runtime/pprof wrote it (gzipped proto)
//	/debug/memdoctor/events            JSON list of Event: [{"id","time","trigger","detail",
//	                                   "values":{...},"spike_start","before","after",
//	                                   "before_goroutine","after_goroutine","trace"}]
//	/debug/memdoctor/traces            JSON list of TraceInfo: [{"name","time","size","events"}]
//	/debug/memdoctor/traces/NAME       the runtime/trace bytes of a flight-recorder snapshot
//	/debug/memdoctor/breakdown         JSON breakdown.At of the latest sample
//	/debug/memdoctor/stats             JSON Stats: the breakdown, GC/s, GC and assist CPU
//	                                   fractions over the last minute, pressure, event counts
//
// Errors are JSON {"error": "..."} with a 4xx status; an unknown profile or trace (rotated
// out) is 404. Every response carries "X-Memdoctor-Agent: 1". The contract's other side is
// package collect/agentclient in the memdoctor module.
//
// # Security
//
// The endpoints expose heap contents' shapes, goroutine stacks and command lines. Handler
// serves whoever reaches the mux it is mounted on, like net/http/pprof, unless WithToken is
// set: then every request needs "Authorization: Bearer <token>", compared in constant time.
// ListenAndServe binds to loopback by default and refuses any other address without a token.
//
// # Cost
//
// Measured in bench/agent against no agent, grafana/pyroscope-go and mosn.io/holmes: see
// docs/performance.md (in the repository). The package imports only the standard library and
// the leaves of its own module that memdoctor shares with it: record (the session's records
// and writer), breakdown, procfs, sample, leakcheck and wire.
package agent
