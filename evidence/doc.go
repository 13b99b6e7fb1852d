// Package evidence is the one model of what was observed about a Go service, whatever
// observed it: a memdoctor session recorded by `run`, by `watch` on a pprof endpoint or on
// memdoctor's agent, a folder of profiles, or a range of Prometheus metrics.
//
// Each source is mapped here once onto canonical series: resident memory (RSS, its
// high-water mark, its anonymous, file and LazyFree parts), the Go heap (live, in use, at
// each GC, its goal, the free pages the runtime keeps), goroutines (and those the runtime
// proved leaked), cumulative counters (GC cycles, forced cycles, GC CPU and assists,
// allocated bytes and objects, the process's CPU), the parts of RSS where a Go reading and a
// /proc reading were taken together, and the profile snapshots, read by site. Every point
// carries its time and its source, and every series its resolution.
//
// The rules (through package facts) read only an Evidence: which collector produced a number
// is not their business, so every vantage point is judged by the same rules. A series never
// mixes sources: the table of quantities (quantity.go) lists, for each quantity, its unit,
// the sources that may measure it in order of preference, how a session's sample gives it and
// why it is missing; the first of its sources with a few readings wins, else the one with the
// most (a goroutine count from the pprof index every second beats one from a goroutine
// profile every ten). A new quantity is a field of Evidence, an entry of that table and its
// reader; the tests fail until all three agree, and until every figure of a sample is read
// or said not to be.
//
// Memory stays bounded whatever the window: series are built while streaming the source,
// and one that outgrows 4096 time slices keeps each slice's lowest and highest reading, so
// floors, peaks and the ends of counters survive. Profiles are parsed on demand, a few at a
// time, with their decompressed size bounded.
//
// The layers walk one way: collect -> session -> evidence -> rules -> report. This package
// imports the session format and the culprit attribution, never a collector or a rule.
package evidence
