// Package proof holds leaktest's proofs on real libraries: leaks that shipped in a release of a
// library and were fixed in a later one, each found by leaktest.Loop in the release that
// leaked (naming the line the fix changed) and passed in the release that fixed it; and
// healthy uses of real libraries, passed.
//
// Each case is a directory of testdata/: a test of the library as a service would use it
// (proof_test.go), and for each release the go.mod and go.sum of a module that requires it
// (RELEASE.mod, RELEASE.sum, with leaktest replaced by the working tree's). The tests here
// copy a case into a temporary module and run go test on it, so that no real library ever
// enters this module's graph, leaktest's, or memdoctor's.
//
//	go test ./bench/leaktest/...                       # every case, every release
//	go test ./bench/leaktest/... -run TestLeakingReleasesFail/backoff -v
//	go test ./bench/leaktest/... -update               # write the go.mod and go.sum files again (needs the module proxy)
//	bench/leaktest/run.sh                              # 20 runs of each healthy test on a busy machine, and the benchmarks
//
// The releases come from the module proxy (GOPROXY), as go test would fetch them; the go.sum
// files verify them.
package proof

// A proofCase is one library's leak, or one healthy use of a library.
type proofCase struct {
	name    string // the directory under testdata
	library string // the module
	// leaking is the release that shipped the leak, fixed the one that fixed it (for a
	// healthy case, fixed is the release used and leaking is empty).
	leaking, fixed string
	issue, fix     string // where the leak was reported, and the change that fixed it
	// want is what the leaking release's failure must say: the lines the fix changed, and
	// the program's line that called the library ("{line of TEXT}" stands for the number of
	// the line of proof_test.go that holds TEXT).
	want []string
}

var cases = []proofCase{
	{
		name:    "fasthttpproxy",
		library: "github.com/valyala/fasthttp",
		leaking: "v1.69.0", fixed: "v1.70.0",
		issue: "https://github.com/valyala/fasthttp/issues/2143",
		fix:   "https://github.com/valyala/fasthttp/pull/2144",
		want: []string{
			"the live heap keeps growing",
			"allocated under your code at fasthttpproxy/proof_test.go:{line of fasthttpproxy.FasthttpHTTPDialerTimeout(}",
			// addrAndAuth: the credentials (255) stored in the package-level cache (259).
			"allocated at fasthttpproxy/dialer.go:259",
			"allocated at fasthttpproxy/dialer.go:255",
			"github.com/valyala/fasthttp/fasthttpproxy.addrAndAuth",
		},
	},
	{
		name:    "backoff",
		library: "github.com/lestrrat-go/backoff/v2",
		leaking: "v2.0.7", fixed: "v2.0.8",
		issue: "https://github.com/lestrrat-go/backoff/pull/30",
		fix:   "https://github.com/lestrrat-go/backoff/commit/0610f7f5c1b844936f3d8366094928230abf84bb",
		want: []string{
			"keep growing with the calls of fn: a leak",
			// The send the fix put in a select on the context.
			"more goroutines [chan send]",
			"waiting at v2@v2.0.7/controller.go:64",
			"github.com/lestrrat-go/backoff/v2.(*controller).loop",
			"started by the go statement at v2@v2.0.7/controller.go:46",
			"made by your code at backoff/proof_test.go:{line of policy.Start(ctx)}",
		},
	},
	{
		name:    "golanglru",
		library: "github.com/hashicorp/golang-lru/v2",
		fixed:   "v2.0.7",
	},
}
