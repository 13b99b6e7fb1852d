// Package snapshot makes a Go process's memory hold still while it is read, for as short a
// stop as it can: what a reading of the heap needs is copied while the process is stopped,
// into an unlinked temporary file, and the process runs again while the copy is read. A
// core file already is such a copy, and is read as it is: one code path reads both.
//
// Before the process is stopped, the copy is estimated from the runtime's own tables (its
// spans, persistent chunks and goroutines, read while it runs) and a rate measured on part
// of its heap; a stop estimated longer than allowed is refused without stopping anything.
// While it is stopped, only what the walk of holders/walk and its naming read is copied:
// the program's data and bss, the runtime's persistent metadata (span records, specials,
// heap-profile buckets, itabs, the finalizer and cleanup queues' blocks), the memory of
// the heap's in-use spans whose objects may hold pointers, every goroutine's stack, and what
// each thread's frames and thread-local variables need. Pointer-free spans are left out (the
// walk never reads them; Delve's view of the copy reads them as zeros). The executable's code and, where it is loaded as linked, its
// read-only data are read from its file.
//
// The stacks alone are copied as far as they can be read (memory the process's map says is
// readable and is not costs the paths through it, counted and said); anything else that
// cannot be read fails the snapshot, naming the mapping that holds it.
package snapshot
