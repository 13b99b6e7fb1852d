// Package lab holds small, realistic Go service programs ("scenarios"), each
// reproducing one production memory problem from the stories in
// DEVELOPERS.md with the same mechanism: an unbounded TCP reassembly buffer,
// a regexp compiled per call, reflection-heavy hashing, a decompressed body
// read whole, GC pressure from per-request garbage, memory kept by the
// runtime under MADV_FREE, 20 MB JSON bodies unmarshalled whole, leaked
// goroutines, memory mapped outside the Go heap, and a healthy control; and
// shapes that are hard to tell apart: a leak under bigger periodic spikes, a
// cache warm-up that plateaus (a control), an HTTP client leaking through
// unclosed response bodies, goroutines blocked on a channel nobody can reach
// (the case Go 1.27's goroutineleak profile proves), and a slow leak.
//
// Each scenario serves net/http/pprof on a loopback address, drives its own
// load over loopback HTTP with a bounded number of client goroutines, and
// carries the diagnosis memdoctor is expected to reach (Expect): the finding
// kinds, the culprit function as pprof prints it, the kinds that must not be
// reported, and how to run and watch it.
//
// Running a scenario:
//
//	memdoctor lab run regexp-per-call              # serve it until Ctrl-C
//	memdoctor run -- memdoctor lab run regexp-per-call
//
// From Go: look it up and call Run until the context is cancelled:
//
//	s, ok := lab.Lookup("regexp-per-call")
//	err := s.Run(ctx, lab.Env{Stdout: os.Stdout})
//
// A running scenario prints exactly one line when it listens,
//
//	lab: NAME serving pprof on http://127.0.0.1:PORT/debug/pprof/
//
// and one when it has shut down,
//
//	lab: NAME stopped after D: N requests, G gc cycles
//
// With MEMDOCTOR_LAB_AGENT=1 (AgentEnv) in its environment, a scenario also
// embeds memdoctor's agent and serves it at /debug/memdoctor/ on the same
// server, so that it can be watched from the agent's vantage point too.
//
// Every scenario is bounded so that it can never take the machine down: its
// memory growth, goroutine count and CPU (about one core) are capped, and it
// only ever binds to loopback.
//
// Adding a scenario: write one file named after it (kebab-case name,
// snake_case file) with a constructor returning a Scenario and add the
// constructor to the list in lab.go. Keep the culprit code (the lines the
// diagnosis must name) in named functions or methods of that file, never in
// anonymous closures, so that pprof shows a stable name; build the service
// with serve (serve.go), which owns the listener, the pprof handlers, the load
// generator and the shutdown. Then add its culprit to the table in
// lab_test.go and measure the mechanism with a real run before trusting it.
package lab
