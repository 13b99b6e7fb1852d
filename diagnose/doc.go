// Package diagnose judges an evidence.Evidence: it turns what was observed about a service
// into the headline figures, the split of resident memory ("pprof says 7 MB, docker says
// 400 MB") and the findings, each with its confidence, the numbers that prove it, the culprit
// code and the fix.
//
// Each finding kind has one rule, in its own file: a pure function of the evidence. Rules
// never print, never touch the target, and never ask which collector produced a number:
// `run`, `watch` on pprof, `watch` on memdoctor's agent and a folder of profiles all become
// the same evidence, so they get the same verdict from the same data.
//
// How a rule decides (judge.go): whatever should not grow is judged on its floor (the lows
// it returns to between bursts), from effect size, consistency and enough data together. A
// large, monotone climb over few readings is a finding; a small drift over many is not; a
// warm-up that levels off is not. A finding is confirmed when the growth matters, rises
// consistently (Kendall's tau, Mann-Kendall), stands clear of the readings' scatter and is
// still rising at the end; it is suspected when it points that way without proof yet, and
// then says how much longer to watch. A suspected finding is never above info. When a rule
// cannot judge (a source is missing, the window is too short), the diagnosis says so in
// NotJudged; "no memory problem found" is said only when every rule could judge.
//
// The JSON form of a Diagnosis is the contract "memdoctor/diagnosis/v1".
package diagnose
