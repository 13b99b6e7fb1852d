// Package pprofdir reads what people already have into one evidence.Evidence: folders of
// profiles they saved from /debug/pprof every few minutes, single profiles, and the
// GODEBUG=gctrace=1 lines a container log kept, so that the same rules judge them as judge
// a memdoctor session.
//
// Each input is a folder, a profile or a gctrace log; a folder is read with its subfolders
// (symbolic links followed, each folder once, hidden entries and memdoctor sessions inside
// it skipped, at most 16 levels deep and 100,000 entries in all). What a file is comes from
// its content, never its name: a pprof protobuf (gzipped or not) is a heap, goroutine or
// goroutineleak profile by its sample types (an unnamed one by its stacks); "heap profile:"
// text is a legacy heap profile; "goroutine profile: total N" and "goroutine N [...]:" text
// are goroutine dumps (debug=1, debug=2); other text holding gc lines is a gctrace log. A
// CPU, mutex, block or threadcreate profile is not about memory and is skipped, as are
// files that are none of these; inside a folder each skip is counted in a note, while a file
// named on the command line that cannot be read as asked is an error.
//
// A profile is placed at the time it carries (TimeNanos), else at its file's modification
// time; a note says so when they disagree or when the time is missing. Profiles are read
// within pprofio's limits, and only their totals are read up front (heap totals give the live
// heap and the allocation counters, goroutine profiles the goroutine count): the rules parse
// the few they compare. A delta heap profile (?seconds=N) is kept, labelled "delta", but not
// used for the heap's trend. The program's own code (its main module) is inferred from the
// profiles' source file paths unless given.
//
// A gctrace log's lines may carry an RFC 3339 time (docker logs --timestamps, kubectl logs
// --timestamps, the kubelet's CRI log files, Docker's json-file driver) or none. With times,
// each run of the program (cycle numbers start again after a restart) is placed by its
// start, the earliest of a line's time minus its "@" offset and the cycle's clock time, and
// each cycle at start + "@". Without times, the last run is placed by assuming that the log's
// last line was written when the file was last modified (a note says so); earlier runs
// without times cannot be placed and are left out.
package pprofdir
