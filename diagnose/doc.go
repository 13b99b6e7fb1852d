// Package diagnose turns a session into a diagnosis: the summary figures, the breakdown of
// resident memory ("pprof says 7 MB, docker says 400 MB") and the findings.
//
// Each finding kind has one rule, in its own file: a pure function from a loaded session
// (an *Input) to findings. Rules never print and never touch the target; they read samples,
// gctrace cycles and stored profiles, and return evidence with units in its names, the
// culprit code (the program's own frame, with its stack) and advice.
//
// The JSON form of a Diagnosis is the contract "memdoctor/diagnosis/v1".
package diagnose
