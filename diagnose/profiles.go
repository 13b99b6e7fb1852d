package diagnose

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/internal/pprofio"
	"github.com/memdoctor/memdoctor/session"
)

// HeapTotal is the sum of each sample type of one stored heap profile.
type HeapTotal struct {
	Ref                      session.ProfileRef
	T                        time.Time
	InuseSpace, InuseObjects int64
	AllocSpace, AllocObjects int64
}

// Profile loads a stored profile (ref as session.Open lists it), keeping the few most
// recently used parsed in memory.
// A profile that cannot be read is named once in the diagnosis' notes.
func (in *Input) Profile(ref session.ProfileRef) (*profile.Profile, error) {
	p, err := in.profiles.get(ref.Path)
	if err != nil && in.profiles.failedOnce(ref.Path) {
		in.notef("skipped profile %s: %v", filepath.Base(ref.Path), err)
	}
	return p, err
}

// HeapTotals returns the totals of every readable heap profile, in time order. Unreadable
// profiles are skipped with a note. The result is computed once.
func (in *Input) HeapTotals() []HeapTotal {
	in.profiles.totalsOnce.Do(func() {
		for _, ref := range in.Session.ProfilesOf(session.KindHeap, false) {
			p, err := in.Profile(ref)
			if err != nil {
				continue
			}
			t := HeapTotal{Ref: ref, T: ref.Time}
			for i, st := range p.SampleType {
				var sum int64
				for _, s := range p.Sample {
					sum += s.Value[i]
				}
				switch st.Type {
				case "inuse_space":
					t.InuseSpace = sum
				case "inuse_objects":
					t.InuseObjects = sum
				case "alloc_space":
					t.AllocSpace = sum
				case "alloc_objects":
					t.AllocObjects = sum
				}
			}
			in.profiles.totals = append(in.profiles.totals, t)
		}
	})
	return in.profiles.totals
}

// profileCache keeps the last few parsed profiles: rules often compare neighbours.
type profileCache struct {
	mu    sync.Mutex
	max   int
	order []string
	byKey map[string]*profile.Profile

	totalsOnce sync.Once
	totals     []HeapTotal
	failed     map[string]bool
	errs       map[string]error // the paths that failed to read, and why
}

// failedOnce records a failed path and reports whether it is the first failure for it.
func (c *profileCache) failedOnce(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed[path] {
		return false
	}
	c.failed[path] = true
	return true
}

func newProfileCache(max int) *profileCache {
	return &profileCache{max: max, byKey: make(map[string]*profile.Profile), failed: make(map[string]bool), errs: make(map[string]error)}
}

func (c *profileCache) get(path string) (*profile.Profile, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.byKey[path]; ok {
		return p, nil
	}
	if err, ok := c.errs[path]; ok { // a failed read is not retried: a bomb costs once
		return nil, err
	}
	p, err := pprofio.Default.ReadFileAs(filepath.Base(path)+" is not a readable profile", path)
	if err != nil {
		c.errs[path] = err
		return nil, err
	}
	if len(c.order) >= c.max {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, path)
	c.byKey[path] = p
	return p, nil
}
