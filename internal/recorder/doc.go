// Package recorder collects a session while its target runs: it samples /proc and the
// cgroup every --sample, scrapes the pprof endpoints every --interval, captures the target's
// gctrace lines, and appends everything to a session.Writer as it goes, so that nothing
// collected is lost when collection stops for any reason.
//
// A Recorder holds a bounded amount of memory however long it runs: samples and profiles go
// straight to disk; only the figures of the live status line are kept.
package recorder
