// Package rule holds memdoctor's rules: one per finding kind, each in its own file, each a
// pure function of a facts.Facts that returns typed verdicts (kind, severity, confidence,
// culprits, and the rule's figures in a Case) or why it could not judge. Every line a rule
// draws is in one Thresholds value (Default). Rules import nothing of memdoctor's but the
// facts, and nothing else but the standard library: they read no file, print nothing, and
// their tests build facts in memory: by hand, or with facts.Of from an evidence whose
// profiles are in hand (evidence_test.go). Judge runs them in a literal list, then reconciles the
// verdicts (a growth another verdict explains is said once) and orders them.
//
// How a rule decides (judge.go): whatever should not grow is judged on its floor (the lows
// it returns to between bursts), from effect size, consistency and enough data together. A
// large, monotone climb over few readings is a verdict; a small drift over many is not; a
// warm-up that levels off is not. A verdict is confirmed when the growth matters, rises
// consistently (Kendall's tau, Mann-Kendall), stands clear of the readings' scatter and is
// still rising at the end; it is suspected when it points that way without proof yet, and
// then says how much longer to watch. A suspected verdict is never above info. Consistency is
// a sequential test (sequential.go): Mann-Kendall's p-value against a boundary over the number
// of readings that holds a stated false-alarm rate (Trend.FalseAlarm) however often a growth
// is judged as its readings come in, as watch --until-confirmed judges it every interval. The
// statistics themselves (Theil-Sen, Mann-Kendall, the late slope and share, the scatter) are
// leaktest/trend's, a standard-library leaf that leak tests in go test judge with too.
//
// What a verdict says in words is package diagnose/words'.
package rule
