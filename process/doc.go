// Package process reads a Go process from the outside: a live process on Linux, or a core
// file (gcore's, or the kernel's for a program run with GOTRACEBACK=crash) with the
// executable that made it.
//
// A live process is read through /proc/PID/mem. When a consistent view is needed, Stop stops
// every thread with PTRACE_SEIZE and PTRACE_INTERRUPT (never SIGSTOP): a thread whose tracer
// goes away, even killed by SIGKILL, is resumed by the kernel, so the process is never left
// stopped. Resume (and Close) detach, handing back any signal a stop caught. memdoctor writes
// to a process once and only when the user asks: SetMemProfileRate turns on the heap
// profiling of a program that links none (--enable-heap-profiling); nothing else ever writes.
//
// Delve (github.com/go-delve/delve) reads the executable's symbols and DWARF, the core file,
// the goroutines and their frames; this package gives it a read-only backend for the live
// process. The runtime's own structures are read through their DWARF layouts (StructOf),
// never through offsets assumed per release, and the runtime's function table through the
// module data (ReadPclntab): what the runtime itself reads to unwind stacks, find stack maps
// and name frames (FuncInfo, Line, LogicalPCs, as runtime.CallersFrames does). The memory
// profile's buckets are read through BucketLayout (holders' sampled objects and
// collect/memread's heap profile share it); package variables are found in the symbol table
// (Symbols).
//
// What cannot be read is refused in one line that says what to do: not a Go program, a Go
// release other than those in SupportedGo, an executable without DWARF, no permission to
// trace the process (ErrPermission names the capability to grant).
package process
