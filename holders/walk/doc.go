// Package walk reads a Go process's heap from the outside, as the garbage collector walks it:
// from the roots (package variables in the data and bss segments under the runtime's pointer
// masks; each goroutine's frames under the functions' stack maps at their pcs, with the stack
// objects those reach; finalizers, cleanups and the other specials; the queues of finalizers
// and cleanups ready to run; and, conservatively, the registers of stopped threads and the
// frames the runtime itself scans conservatively) through every object's pointer words, found
// as the runtime finds them (the span's pointer bits for small objects, the allocation header
// or the span's large type for the rest).
//
// The walk's graph keeps, for each reached object, the object or root that first reached it
// in a breadth-first walk (precise roots before conservative ones) and its out-edges. Naming is
// a step of its own on that graph: the heap profile's sampled objects (each carries a profile
// special pointing at the bucket of its allocation stack) are grouped by culprit site; the
// objects that lead to them are found (leadsTo); among those, each gets its most readable path
// (choosePaths: a root named and typed first, then a package variable before a goroutine's
// frame, then the fewest steps of unknown type, then the shortest, then the oldest goroutine's
// outermost frame among those that hold one object), named from the executable's DWARF: a
// root's variable (or, for a static the compiler laid out for a composite literal, the
// variable that points at it) and the field,
// slice element, map key or value, interface type assertion or captured variable of each
// step. What DWARF cannot type (an unsafe.Pointer, a type-punned word) is typed from the
// object's own allocation header where it has one, else shown by offset; nothing reachable is
// skipped for want of a type.
//
// A live process is stopped (every thread, with PTRACE_SEIZE and PTRACE_INTERRUPT, never
// SIGSTOP) only while its roots and heap are read and the paths named. What to cut is worked
// out afterwards on the graph kept in memory: the dominator tree (Lengauer-Tarjan) of the
// objects that lead to the samples, below a vertex for the roots grouped by variable or frame;
// for each culprit, the deepest object holding nearly all of what its heaviest holder holds,
// and what cutting it frees on the whole graph. Memory is read through a fixed-size cache of
// blocks: memdoctor's memory grows with the number of objects (a few words each, outside the
// Go heap), never with their bytes.
package walk
