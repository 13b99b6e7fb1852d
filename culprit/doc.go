// Package culprit attributes profile samples to the program's own code,
// diffs profiles, and groups goroutines.
//
// The product's contract is that a culprit names the allocation site in the
// program's own code: the innermost (leaf-most) frame outside the Go runtime
// and the standard library, because that is the line the user can change. The
// full stack (leaf first) goes alongside. When the main module path is known,
// frames in that module win over third-party frames; otherwise the innermost
// non-standard-library frame wins. When every frame belongs to the runtime or
// the standard library the innermost non-runtime frame (or the leaf) is
// reported, with Site.Own set to false.
//
// Aggregate folds one sample type of a profile by culprit site, Diff compares
// two profiles of the same kind site by site (matching by function name and
// line, so the two may come from different processes), and
// GroupGoroutineProfile and ParseGoroutineText group goroutines by wait state,
// stack and creator for leak detection.
//
// It is the diagnosis's own knowledge of stacks and sites, and a leaf of memdoctor's layers
// (docs/development.md): it imports nothing of memdoctor's, so that every layer that meets a
// stack attributes it the same way: the readers (collect/memread, holders/walk), the
// evidence and source/pprofdir, compare and the report.
package culprit
