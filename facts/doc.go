// Package facts is what the rules stand on, computed once from an evidence.Evidence before
// any rule runs: the headline figures (Summary), the floors the series return to between
// bursts, the bursts themselves (Spikes), the live heap's readings as a leak is judged on
// them, the heap's growth by allocation site and how fast each site turns its memory over,
// the part of memory that grew, the GC's cadence, and what the profiles say around each burst
// and between the first and last snapshots.
//
// A Facts is a read-only value: every profile a rule may need is read here, so the rules
// (package diagnose/rule) are pure functions of it and their tests build one in memory,
// without files. Facts hold no judgment: how much growth matters, and how sure a verdict is,
// are the rules' Thresholds. The few constants here define a fact (what a burst is, when a
// process has settled after its start), not a verdict.
//
// The layers walk one way: collect -> session -> evidence -> facts -> rules -> words ->
// report. This package imports evidence and the split of memory, never a rule.
package facts
