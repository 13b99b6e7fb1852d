// Package diagnose judges an evidence.Evidence: it turns what was observed about a service
// into the headline figures, the split of resident memory ("pprof says 7 MB, docker says
// 400 MB") and the findings, each with its confidence, the numbers that prove it, the culprit
// code and the fix.
//
// A diagnosis walks three layers, each in its own package: the facts (package facts:
// floors, bursts, heap growth by site, the part of memory that grew, the GC's cadence,
// computed once from the evidence), the rules (package diagnose/rule: one pure function of
// the facts per finding kind, returning typed verdicts, with every threshold in one
// Thresholds value), and the words (package diagnose/words: titles, details, advice and the
// evidence map). This package puts them together, and names their types for the diagnosis's
// contract. Rules never print, never touch the target, never read a file, and never ask
// which collector produced a number: `run`, `watch` on pprof, `watch` on memdoctor's agent
// and a folder of profiles all become the same evidence, so they get the same verdict from
// the same data.
//
// When a rule cannot judge (a source is missing, the window is too short), the diagnosis
// says so in NotJudged; "no memory problem found" is said only when every rule could judge.
//
// The JSON form of a Diagnosis is the contract "memdoctor/diagnosis/v1".
//
// Tests: the rules are tested in diagnose/rule, on facts built in memory (profiles in hand,
// no file). The tests here put facts, rules and words together: some in memory (gcrate,
// memgrowth, oomkill, snapshot: the words a verdict gets), the rest end to end over sessions
// on disk (golden: the recorded sessions of testdata/sessions; tuning; corrupt, never
// collected and real profiles: what a collector or another program leaves).
package diagnose
