// Package accuracy measures how right memdoctor's verdicts are, from one command and in the
// end-to-end tests.
//
// Every lab scenario is recorded once from every vantage point at the same time: `memdoctor
// run` starts it (gctrace, /proc, pprof), `memdoctor watch --source pprof` and `memdoctor
// watch --source agent` attach to the same process while it runs, and the run's heap and
// goroutine profiles alone make the fourth vantage point (what someone holding only profiles
// has). A build of the scenario that links no profiling at all (internal/dev/labrun, the
// nopprof tag) runs after them, alone, or beside them (Config.MemoryAlongside, as
// TestAccuracyMatrix records), and `memdoctor watch --enable-heap-profiling PID` reads it from
// its memory: the fifth, watch-memory. Each session is then judged at several windows (prefixes
// of the recording) against the scenario's expected verdict: the expected kinds at warning (confirmed), each with its
// culprit in the top three; the absent kinds not at warning; a control with no warning at all.
// The time to verdict is the shortest prefix, in 5 s steps, that already gives the verdict; each
// session is also looked at every 5 s as watch --until-confirmed diagnoses what it recorded so
// far (Watch): where the watch would stop, whether it stops right, and the first look with a
// false warning.
//
// Scores are per finding kind: a true positive is an expected kind found at warning, a false
// negative one that is not, a false positive a kind found at warning that the scenario did
// not expect nor allow. Precision and recall follow.
package accuracy
