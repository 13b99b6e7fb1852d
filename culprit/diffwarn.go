package culprit

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// isCumulative reports whether values of sample type typ only grow during a
// process's life (so that a decrease means a restart or another process).
func isCumulative(typ string) bool {
	switch typ {
	case "alloc_space", "alloc_objects", "contentions", "delay":
		return true
	}
	return false
}

func isHeapType(typ string) bool {
	return strings.HasPrefix(typ, "alloc_") || strings.HasPrefix(typ, "inuse_")
}

// diffWarnings explains why a diff may not mean what it seems to.
func diffWarnings(old, new *profile.Profile, r *DiffResult) []string {
	var w []string
	add := func(format string, args ...any) { w = append(w, fmt.Sprintf(format, args...)) }

	for _, p := range []struct {
		name string
		p    *profile.Profile
	}{{"OLD", old}, {"NEW", new}} {
		if d, ok := deltaProfile(p.p); ok {
			add("%s is a delta profile (it covers %s, as from ?seconds=N): its values are not totals since the process started, so NEW-OLD compares two windows rather than measuring what happened between the snapshots", p.name, d)
		}
	}
	if ob, nb, differ := differentBinaries(old, new); differ {
		add("OLD and NEW come from different binaries (%s, %s): sites are matched by function name and line, which may have changed", ob, nb)
	}
	if old.TimeNanos != 0 && new.TimeNanos != 0 && new.TimeNanos < old.TimeNanos {
		add("NEW was taken %s before OLD: are the arguments swapped?", time.Duration(old.TimeNanos-new.TimeNanos))
	}
	if old.Period != 0 && new.Period != 0 && old.Period != new.Period {
		add("the sampling periods differ (OLD %d, NEW %d): values are estimates at different resolutions", old.Period, new.Period)
	}
	if isCumulative(r.Type) {
		if r.NewTotal < r.OldTotal {
			add("NEW's total %s is smaller than OLD's: are these from different processes (restart in between)?", r.Type)
		} else if n, worst := shrunk(r.ByFunction); n > 0 {
			add("%d functions have a smaller %s in NEW than in OLD (most: %s, %d %s); %s only grows within one process: are these from different processes or builds?",
				n, r.Type, worst.Site.Function, worst.Delta, r.Unit, r.Type)
		}
	}
	if r.OldTotal == r.NewTotal && len(r.ByFunction) > 0 && unchanged(r.ByLine) {
		if isHeapType(r.Type) {
			add("OLD and NEW have identical %s at every site: the heap profile changes only when a GC cycle completes, so no GC ran between the snapshots", r.Type)
		} else {
			add("OLD and NEW have identical %s at every site", r.Type)
		}
	}
	return w
}

// deltaProfile reports whether p is a delta profile (net/http/pprof's
// ?seconds=N sets DurationNanos to the window; an ordinary profile's duration
// is the time it took to write) and the window it covers.
func deltaProfile(p *profile.Profile) (time.Duration, bool) {
	d := time.Duration(p.DurationNanos)
	return d, d >= time.Second
}

// differentBinaries compares the main binaries (first mappings) of two
// profiles by build ID when both have one, else by file name.
func differentBinaries(a, b *profile.Profile) (string, string, bool) {
	ma, mb := mainMapping(a), mainMapping(b)
	if ma == nil || mb == nil {
		return "", "", false
	}
	if ma.BuildID != "" && mb.BuildID != "" {
		return ma.BuildID, mb.BuildID, ma.BuildID != mb.BuildID
	}
	if ma.File != "" && mb.File != "" {
		fa, fb := path.Base(ma.File), path.Base(mb.File)
		return fa, fb, fa != fb
	}
	return "", "", false
}

func mainMapping(p *profile.Profile) *profile.Mapping {
	if len(p.Mapping) == 0 {
		return nil
	}
	return p.Mapping[0]
}

func shrunk(ds []Delta) (n int, worst Delta) {
	for _, d := range ds {
		if d.Delta < 0 {
			n++
			if d.Delta < worst.Delta {
				worst = d
			}
		}
	}
	return n, worst
}

func unchanged(ds []Delta) bool {
	for _, d := range ds {
		if d.Delta != 0 {
			return false
		}
	}
	return true
}
