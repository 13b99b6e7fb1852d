// Package compare tells what changed between two sessions of a service, before and after a
// change, and whether the change is real. For each metric (GC cycles per second, GC CPU and
// its share of mark assists, the allocation rate, the live-heap floor, the peak RSS, the
// goroutines) it gives each session's figure as its diagnosis summarises it, and judges the
// difference as benchstat judges benchmarks: each session is cut into equal intervals, each
// interval's value is measured from its own readings, and the two sets of values are compared
// with a two-sided Mann-Whitney U test (exact, ties included, up to 50 values; the normal
// approximation beyond). A change counts when p is below alpha and the medians differ by more
// than the noise between two runs of one program (for the assists' share of GC CPU, when the
// change also moves at least a point of the process's CPU: how a GC taking 1% of the CPU
// splits is noise); when the sessions are too short for any p-value to reach alpha, it says
// so and how many intervals are needed. The allocation rate is measured between memdoctor's
// rounds when both sessions allow it: serving a round's profiles allocates in the target
// (megabytes for a goroutine profile's text), and how many rounds an interval holds would
// otherwise decide its value.
//
// It also sorts the two diagnoses' findings into resolved, new and persisting, and diffs the
// heap in use at each session's end by function of the program's own code.
//
// It reads evidence and diagnoses (packages evidence and diagnose) and never prints: package
// report renders a Result as text or HTML.
package compare
