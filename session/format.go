package session

import (
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

// The session's records and its writer are defined in the agent's module
// (github.com/memdoctor/memdoctor/agent/record), because the agent embedded in a service
// writes sessions too (its exit action). The names below are those types, constants and
// functions themselves, not copies, so that the memdoctor command reads and writes sessions
// through this one package.

// Format is the manifest's format identifier. Readers accept any "memdoctor/session/v1".
const Format = record.Format

// File names inside a session directory.
const (
	ManifestFile  = record.ManifestFile
	MetricsFile   = record.MetricsFile
	GCTraceFile   = record.GCTraceFile
	DiagnosisFile = record.DiagnosisFile
	ProfilesDir   = record.ProfilesDir
	TracesDir     = record.TracesDir
)

// Status values of a manifest.
const (
	StatusRunning      = record.StatusRunning
	StatusComplete     = record.StatusComplete
	StatusInterrupted  = record.StatusInterrupted
	StatusTargetExited = record.StatusTargetExited
	StatusFailed       = record.StatusFailed
)

// Kinds of data counted in Manifest.Attempts.
const (
	AttemptHeap          = record.AttemptHeap
	AttemptGoroutine     = record.AttemptGoroutine
	AttemptGoroutineText = record.AttemptGoroutineText
	AttemptMemStats      = record.AttemptMemStats
	AttemptProc          = record.AttemptProc
	AttemptCgroup        = record.AttemptCgroup
	AttemptAgentMetrics  = record.AttemptAgentMetrics
	AttemptAgentProfiles = record.AttemptAgentProfiles
)

// Kinds of data and sources of a Manifest.Costs entry, besides the Attempt* kinds.
const (
	DataFigures       = record.DataFigures
	DataIndex         = record.DataIndex
	DataGoroutineLeak = record.DataGoroutineLeak
	DataHeapAfterGC   = record.DataHeapAfterGC
	DataCmdline       = record.DataCmdline
	SourcePprof       = record.SourcePprof
	SourceMemory      = record.SourceMemory
)

// Profile kinds stored in profiles/.
const (
	KindHeap          = record.KindHeap
	KindGoroutine     = record.KindGoroutine
	KindGoroutineText = record.KindGoroutineText
	KindGoroutineLeak = record.KindGoroutineLeak
)

// LabelBeforeOOM marks the profiles taken at once near the memory limit (record.LabelBeforeOOM).
const LabelBeforeOOM = record.LabelBeforeOOM

// Bounds on names and traces (see the record package).
const (
	MaxLabelLen     = record.MaxLabelLen
	MaxTraceNameLen = record.MaxTraceNameLen
	MaxTraceBytes   = record.MaxTraceBytes
)

// ErrTraceTooLarge is wrapped by the error of Writer.WriteTrace for a trace over
// MaxTraceBytes.
var ErrTraceTooLarge = record.ErrTraceTooLarge

// The records of a session and its writer (documented in the record package).
type (
	Manifest    = record.Manifest
	Attempt     = record.Attempt
	Cost        = record.Cost
	Target      = record.Target
	Sample      = record.Sample
	Sched       = record.Sched
	PprofCounts = record.PprofCounts
	Proc        = record.Proc
	Cgroup      = record.Cgroup
	GoMem       = record.GoMem
	ProfileRef  = record.ProfileRef
	Writer      = record.Writer
	ProfileFile = record.ProfileFile
	FS          = record.FS
	File        = record.File
	OSFS        = record.OSFS
)

// Create makes a new session directory and writes its first manifest (record.Create).
func Create(dir string, m Manifest) (*Writer, error) { return record.Create(dir, m) }

// CreateFS is Create on the file system fsys (record.CreateFS).
func CreateFS(fsys FS, dir string, m Manifest) (*Writer, error) {
	return record.CreateFS(fsys, dir, m)
}

// WriteDiagnosis atomically replaces dir/diagnosis.json with v encoded as indented JSON
// (record.WriteDiagnosis).
func WriteDiagnosis(dir string, v any) error { return record.WriteDiagnosis(dir, v) }

// DescribeAttempt names a kind of data (an Attempt* key) and its reads, for notes
// (record.DescribeAttempt).
func DescribeAttempt(kind string) (what, reads string) { return record.DescribeAttempt(kind) }

// CheckLabel reports whether label may be part of a profile file name (record.CheckLabel).
func CheckLabel(label string) error { return record.CheckLabel(label) }

// CheckKind reports whether kind is one a session stores (record.CheckKind).
func CheckKind(kind string) error { return record.CheckKind(kind) }

// CheckTraceName reports whether name may be the file name of a stored trace
// (record.CheckTraceName).
func CheckTraceName(name string) error { return record.CheckTraceName(name) }

// ProfileFileName returns the file name of a profile snapshot (record.ProfileFileName).
func ProfileFileName(kind string, t time.Time, label string) string {
	return record.ProfileFileName(kind, t, label)
}

// ParseProfileFileName is the inverse of ProfileFileName (record.ParseProfileFileName).
func ParseProfileFileName(name string) (ProfileRef, error) {
	return record.ParseProfileFileName(name)
}
