package recorder

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

// tally counts the reads of each kind of data (session.Attempt* keys) for the manifest's
// Attempts. Counting is cheap; the counts reach the manifest with its next write.
type tally struct {
	mu   sync.Mutex
	m    map[string]*attempt
	gen  uint64 // bumped by every add
	sent uint64 // the gen last written to the manifest
}

type attempt struct {
	session.Attempt
	last error // the last error itself, for the note's explanation
}

// add counts one read of kind, failed when err is not nil.
func (t *tally) add(kind string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[string]*attempt)
	}
	a := t.m[kind]
	if a == nil {
		a = &attempt{}
		t.m[kind] = a
	}
	a.Tries++
	if err == nil {
		a.OK++
	} else {
		a.last = err
		a.LastError = clean(err.Error(), 300)
	}
	t.gen++
}

// snapshot returns the counts for the manifest (nil when nothing was tried) and their
// generation.
func (t *tally) snapshot() (map[string]session.Attempt, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) == 0 {
		return nil, t.gen
	}
	out := make(map[string]session.Attempt, len(t.m))
	for k, a := range t.m {
		out[k] = a.Attempt
	}
	return out, t.gen
}

// written records that the counts of generation gen reached the manifest.
func (t *tally) written(gen uint64) {
	t.mu.Lock()
	t.sent = max(t.sent, gen)
	t.mu.Unlock()
}

// changed reports whether counts were added since the manifest was last written with them.
func (t *tally) changed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen != t.sent
}

// notes says, in sentences, which kinds of data never came or mostly failed.
func (t *tally) notes() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, kind := range slices.Sorted(maps.Keys(t.m)) {
		a := t.m[kind]
		if !a.MostlyFailed() || kind == holders.Attempt { // the heap-leak finding says why no holders were read
			continue
		}
		what, verb := session.DescribeAttempt(kind)
		out = append(out, fmt.Sprintf("%s: %d of %d %s succeeded (%s)", what, a.OK, a.Tries, verb, explain(a.last)))
	}
	return out
}

// explain says in a few words why reads failed, from the last error.
func explain(err error) string {
	var se *scrape.StatusError
	switch {
	case err == nil:
		return "no error recorded"
	case errors.Is(err, scrape.ErrNotProfile) && strings.Contains(err.Error(), "HTML page"),
		errors.Is(err, scrape.ErrNoMemStats) && strings.Contains(err.Error(), `body: "<`):
		return "the server answered an HTML page: a login page?"
	case errors.As(err, &se) && (se.StatusCode == 401 || se.StatusCode == 403),
		errors.Is(err, agentclient.ErrUnauthorized):
		return "the server wants credentials: pass --token"
	case errors.Is(err, scrape.ErrTooLarge):
		return "the responses were larger than the size limit"
	case errors.Is(err, scrape.ErrTimeout):
		return "the requests timed out"
	case errors.Is(err, scrape.ErrUnreachable):
		return "the service did not answer"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied: run memdoctor as the target's user"
	}
	return "the last error: " + clean(err.Error(), 200)
}

// clean makes text from a target safe for a one-line note: control characters become
// spaces, runs of space shrink to one, and it is cut to at most n runes.
func clean(s string, n int) string {
	var b strings.Builder
	space, runes := false, 0
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			runes++
			space = false
		}
		if runes >= n {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
		runes++
	}
	return b.String()
}
