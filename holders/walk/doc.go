// Package walk reads a Go process's heap from the outside, as the garbage collector walks it:
// from the roots (package variables in the data and bss segments under the runtime's pointer
// masks; each goroutine's frames under the functions' stack maps at their pcs, with the stack
// objects those reach; finalizers, cleanups and the other specials; the queues of finalizers
// and cleanups ready to run; and, conservatively, the registers of stopped threads and the
// frames the runtime itself scans conservatively) through every object's pointer words, found
// as the runtime finds them (the span's pointer bits for small objects, the allocation header
// or the span's large type for the rest).
//
// Each reached object keeps the object or root that first reached it in a breadth-first walk,
// precise roots before conservative ones, so its path back to a root is a shortest one. The
// heap profile's sampled objects (each carries a profile special pointing at the bucket of its
// allocation stack) are grouped by culprit site, and their paths are named from the
// executable's DWARF: a root's variable and the field, slice element, map key or value,
// interface type assertion or captured variable of each step. What DWARF cannot type (an
// unsafe.Pointer, a type-punned word) is typed from the object's own allocation header where
// it has one, else shown by offset; nothing reachable is skipped for want of a type.
//
// A live process is stopped (every thread, with PTRACE_SEIZE and PTRACE_INTERRUPT, never
// SIGSTOP) only while its roots and heap are read and the paths named; what letting go of a
// root would free is worked out afterwards on the graph kept in memory. Its memory is read
// through a fixed-size cache of blocks: memdoctor's memory grows with the number of objects
// (a few words each), never with their bytes.
package walk
