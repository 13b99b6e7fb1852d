// Package session reads and writes memdoctor sessions.
//
// A session is a directory that anyone can open with standard tools:
//
//	manifest.json      what was watched, how, when, and how it ended (written atomically)
//	metrics.jsonl      one Sample per line, appended as collected
//	gctrace.log        the target's raw GODEBUG=gctrace=1 lines
//	profiles/          heap-<time>.pb.gz, goroutine-<time>.pb.gz (open with go tool pprof),
//	                   goroutine-<time>.txt (goroutine?debug=1),
//	                   goroutineleak-<time>.pb.gz (the goroutineleak profile, when served)
//	diagnosis.json     the last diagnosis (memdoctor/diagnosis/v1)
//
// Files are only ever appended to, or replaced by rename, so a collector killed at any moment
// leaves a directory that Open still reads: a torn last line of metrics.jsonl is skipped with a
// warning, a profile is never visible half-written, and the manifest is always whole.
//
// The records and the Writer are the agent module's record package (the agent embedded in a
// service writes sessions too); this package names them and reads sessions.
package session
