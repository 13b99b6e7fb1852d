// Package holders is the answer to "who keeps this memory alive?": for each culprit site of a
// heap leak, the reference paths from the GC roots (a package variable, a goroutine's local,
// a finalizer...) through fields, slice elements, map values and interfaces down to the
// objects the site allocated, aggregated over the heap profile's sampled objects, and what to
// cut to free them (Cut: the object that holds most of them alone, with what cutting it frees).
//
// This package holds the result and its forms (text, JSON, a pprof profile whose frames are
// the paths). Reading a process or a core to produce one is package walk's job, which needs
// Delve; this package needs nothing beyond the standard library and pprof's profile package,
// so reports can show a result without reading processes.
package holders
