// Package record defines the records of a memdoctor session and writes them: the manifest,
// the samples of metrics.jsonl, the gctrace log, the names of stored profiles and traces, and
// the append-only Writer.
//
// It lives in the agent's module because the agent embedded in a service writes sessions too
// (its exit action) and keeps its samples as these records; the memdoctor command reads them
// with its session package, whose types are these. It imports only the standard library.
//
// Files are only ever appended to, or replaced by rename, so a writer killed at any moment
// leaves a directory that a reader still opens: a torn last line of metrics.jsonl is skipped,
// a profile is never visible half-written, and the manifest is always whole.
package record
