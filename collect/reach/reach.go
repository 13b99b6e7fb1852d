// Package reach finds, in a Go program's source, the call of a function that reaches the go
// statement which starts some goroutines: the line of the program that made a library's
// goroutines (a handler's sql.Open, a per-request grpc.NewClient), which the runtime's
// profiles do not record (they record the go statement inside the library, and a
// constructor's few allocations are rarely sampled).
//
// It reads the source where the binary says it is (its DWARF's and profiles' file paths): in
// development and CI the program was built on the same machine, so its files, the standard
// library's and the module cache's are there. Packages are loaded one at a time, as the calls
// lead to them (golang.org/x/tools/go/packages: `go list` and the build cache's export data
// for their imports), each summarized into its functions' static calls and go statements and
// then let go of: calls through interfaces and function values are not followed. Every
// reading is bounded (packages loaded, functions visited, time); answers are cached for the
// life of the process. Where the source is not at hand (no file, no go.mod above it, no go
// command), Find says so and the caller keeps what the profiles say.
package reach

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/culprit"
)

// Query asks which call of Function reaches a go statement that starts goroutines of one of
// Starts (their start functions, as profiles name them) or that runs inside one of Creators
// (the functions the runtime recorded as their creators, when known).
type Query struct {
	Function string // as profiles name it: "example.com/svc.(*Ledger).Lookup"
	File     string // its source file, as the binary records it
	Starts   []string
	Creators []string
	// Weight ranks the start functions (how many of their goroutines grew); a call that
	// reaches more of them comes first.
	Weight map[string]int
	// Lines are lines of Function the binary's profiles hold a call at: the source on disk is
	// taken for the one the binary was built from only when each of them holds a call of
	// Function there (a file edited since the build is not read).
	Lines []int64
}

// Answer is the call found.
type Answer struct {
	Line   int64  // of the call in Query.Function
	Callee string // the function it calls, as profiles name it
	// Reached are the start functions (or creators) it reaches, and Via the calls from the
	// callee to the go statement's function for the first of them.
	Reached []string
	Via     []string
}

// ErrNoSource: the program's source is not at hand (the file does not exist, or no go.mod is
// above it, or the go command failed to list it).
var ErrNoSource = errors.New("the program's source is not at hand")

// Bounds of one query: packages loaded, functions whose calls are followed, time.
const (
	maxPackages = 40
	maxVisits   = 20000
	maxDepth    = 12
	queryTime   = 30 * time.Second
)

var cache = struct {
	sync.Mutex
	answers map[string]result
}{answers: map[string]result{}}

type result struct {
	a   Answer
	ok  bool
	err error
}

// maxAnswers bounds the answers cached.
const maxAnswers = 256

// Find answers q from the program's source: ok is false when no call of q.Function reaches
// such a go statement (as far as static calls go, within the bounds), and the error wraps
// ErrNoSource when the source is not at hand.
func Find(ctx context.Context, q Query) (Answer, bool, error) {
	key := q.key()
	cache.Lock()
	r, hit := cache.answers[key]
	cache.Unlock()
	if hit {
		return r.a, r.ok, r.err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTime)
	defer cancel()
	a, ok, err := find(ctx, q)
	if ctx.Err() == nil || err == nil { // an answer cut short by its caller is not kept
		cache.Lock()
		if len(cache.answers) >= maxAnswers {
			clear(cache.answers)
		}
		cache.answers[key] = result{a, ok, err}
		cache.Unlock()
	}
	return a, ok, err
}

func (q Query) key() string {
	var b strings.Builder
	for _, s := range [][]string{{q.Function, q.File}, sorted(q.Starts), sorted(q.Creators)} {
		b.WriteString(strings.Join(s, "\x00"))
		b.WriteByte(1)
	}
	for _, l := range q.Lines {
		fmt.Fprintf(&b, "%d,", l)
	}
	return b.String()
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func find(ctx context.Context, q Query) (Answer, bool, error) {
	if q.Function == "" || q.File == "" || len(q.Starts)+len(q.Creators) == 0 {
		return Answer{}, false, nil
	}
	dir, err := moduleDir(q.File)
	if err != nil {
		return Answer{}, false, err
	}
	p := &program{dir: dir, funcs: map[string]*summary{}, loaded: map[string]bool{}, into: map[string]bool{}, imports: map[*types.Package]bool{}}
	for _, fn := range slices.Concat(q.Starts, q.Creators) {
		if pkg := culprit.PackagePath(fn); pkg != "" {
			p.into[pkg] = true
		}
	}
	if err := p.loadFile(ctx, q.File); err != nil {
		return Answer{}, false, err
	}
	fn := p.funcs[canonical(q.Function)]
	if fn == nil {
		return Answer{}, false, nil
	}
	for _, l := range q.Lines {
		if !fn.callLines[l] {
			return Answer{}, false, fmt.Errorf("%w: %s has no call at line %d of %s, where the binary has one: the file changed since the build", ErrNoSource, q.Function, l, q.File)
		}
	}
	targets := map[string]bool{}
	names := map[string]string{} // canonical -> as asked
	for _, s := range q.Starts {
		targets["go "+canonical(s)] = true
		names[canonical(s)] = s
	}
	for _, c := range q.Creators {
		targets[canonical(c)] = true
		names[canonical(c)] = c
	}
	w := &walk{p: p, ctx: ctx, targets: targets, memo: map[string][]hit{}, onPath: map[string]bool{}}
	var best Answer
	bestWeight := -1
	for _, c := range fn.calls {
		hits := w.reach(c.callee, c.pkg, 0)
		if len(hits) == 0 {
			continue
		}
		a := Answer{Line: c.line, Callee: c.callee}
		weight := 0
		for _, h := range hits {
			a.Reached = append(a.Reached, h.target)
			weight += max(q.Weight[names[strings.TrimPrefix(h.target, "go ")]], 1)
		}
		a.Via = hits[0].via
		if weight > bestWeight { // ties: the first call in the source, which made the value used after
			best, bestWeight = a, weight
		}
	}
	for i, r := range best.Reached {
		best.Reached[i] = names[strings.TrimPrefix(r, "go ")]
	}
	return best, bestWeight >= 0, nil
}

// hit is a target reached, and the calls that lead to it (the function reached last).
type hit struct {
	target string
	via    []string
}

// walk follows static calls from function to function.
type walk struct {
	p       *program
	ctx     context.Context
	targets map[string]bool
	memo    map[string][]hit
	onPath  map[string]bool
	visits  int
}

// reach returns the targets fn reaches: a go statement starting one of them, or a call of
// one of them (a creator), in fn or in what it calls.
func (w *walk) reach(fn, pkg string, depth int) []hit {
	if hs, ok := w.memo[fn]; ok {
		return hs
	}
	if w.targets[fn] {
		return []hit{{target: fn, via: []string{fn}}}
	}
	if depth > maxDepth || w.onPath[fn] || w.visits >= maxVisits || w.ctx.Err() != nil {
		return nil // not kept in memo: another path may get further
	}
	w.visits++
	s := w.p.summary(w.ctx, fn, pkg)
	if s == nil {
		w.memo[fn] = nil
		return nil
	}
	w.onPath[fn] = true
	defer delete(w.onPath, fn)
	var out []hit
	seen := map[string]bool{}
	add := func(h hit) {
		if !seen[h.target] {
			seen[h.target] = true
			out = append(out, h)
		}
	}
	for _, g := range s.gos {
		if t := "go " + g; w.targets[t] {
			add(hit{target: t, via: []string{fn}})
		}
	}
	for _, c := range s.calls {
		for _, h := range w.reach(c.callee, c.pkg, depth+1) {
			add(hit{target: h.target, via: append([]string{fn}, h.via...)})
		}
	}
	slices.SortStableFunc(out, func(a, b hit) int { return cmp.Compare(len(a.via), len(b.via)) })
	w.memo[fn] = out
	return out
}

// moduleDir is the directory of the go.mod above file: where `go list` resolves the program's
// packages at the versions it was built with.
func moduleDir(file string) (string, error) {
	if !filepath.IsAbs(file) || filepath.Ext(file) != ".go" {
		return "", ErrNoSource
	}
	if _, err := os.Stat(file); err != nil {
		return "", ErrNoSource
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if parent := filepath.Dir(dir); parent == dir {
			return "", ErrNoSource
		}
	}
}

// plain drops a name's generic type arguments: "pkg.F[...]" and "pkg.(*T[go.shape.int]).M"
// are "pkg.F" and "pkg.(*T).M".
func plain(name string) string {
	for {
		i := strings.IndexByte(name, '[')
		if i < 0 {
			return name
		}
		depth, j := 0, i
		for ; j < len(name); j++ {
			if name[j] == '[' {
				depth++
			} else if name[j] == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if j >= len(name) {
			return name[:i]
		}
		name = name[:i] + name[j+1:]
	}
}
