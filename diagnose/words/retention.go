package words

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

func retention(f *Finding, c *rule.RetentionCase) {
	last, lastR := c.At, c.Retained
	f.Evidence = map[string]float64{
		"rss_bytes":                     float64(last.RSSBytes),
		"live_heap_bytes":               float64(last.LiveHeapBytes),
		"retained_free_heap_bytes":      float64(last.RetainedFreeBytes),
		"released_resident_bytes":       float64(last.ReleasedResidentBytes),
		"retained_share_of_rss":         lastR / float64(max(last.RSSBytes, 1)),
		"retained_peak_bytes":           c.Peak,
		"readings_with_retention_share": float64(c.Hits) / float64(c.Splits),
	}
	goVer, godebug := c.GoVersion, c.GODEBUG
	if c.Lazy {
		f.Title = fmt.Sprintf("%s of RSS is freed memory the kernel has not taken back (MADV_FREE), not a leak", bytesStr(float64(last.ReleasedResidentBytes)))
		f.Detail = fmt.Sprintf("RSS is %s but the live heap is only %s. The runtime has already returned %s to the kernel with MADV_FREE; "+
			"the kernel leaves such pages in place (they show as LazyFree in /proc/PID/smaps_rollup) until it needs memory, so RSS and "+
			"container metrics count them although they are free. The process is not leaking: under memory pressure the kernel reclaims them.",
			bytesStr(float64(last.RSSBytes)), bytesStr(float64(last.LiveHeapBytes)), bytesStr(float64(last.ReleasedResidentBytes)))
		f.Advice = append(f.Advice, madvAdvice(goVer, godebug)...)
		f.AdviceEnv = map[string]string{"GODEBUG": withSetting(godebug, "madvdontneed", "1")}
	} else {
		f.Title = fmt.Sprintf("%s of RSS is free heap the Go runtime keeps, not a leak", bytesStr(float64(last.RetainedFreeBytes)))
		f.Detail = fmt.Sprintf("RSS is %s but the live heap is only %s: %s is free heap the runtime holds on to for reuse. "+
			"The background scavenger returns it slowly (about 1%% of one CPU, toward a goal recomputed at each GC, and a freed spike "+
			"takes two GCs to release; an idle program gets a forced GC only every 2 minutes). It is not a leak: the heap will reuse it.",
			bytesStr(float64(last.RSSBytes)), bytesStr(float64(last.LiveHeapBytes)), bytesStr(float64(last.RetainedFreeBytes)))
		if c.Budget > 0 {
			limit := 0.9 * float64(c.Budget)
			f.AdviceEnv = map[string]string{"GOMEMLIMIT": mib(limit)}
			f.Advice = append(f.Advice, fmt.Sprintf("Set GOMEMLIMIT=%s: with a limit the scavenger keeps the runtime's resident memory under 95%% of it, returning free pages as needed.", mib(limit)))
		} else {
			f.Advice = append(f.Advice, "Set GOMEMLIMIT (say 90% of the memory the process may use): with a limit the scavenger keeps the runtime's resident memory under 95% of it.")
		}
		f.Advice = append(f.Advice, "After a known burst (a batch, a big import), call debug.FreeOSMemory() to return the free heap at once; it runs a GC, so not on a hot path.")
	}
	if c.ComesAndGoes {
		f.Detail += fmt.Sprintf(" It comes and goes: retained in %d of %d readings (at most %s), lower at the end.", c.Hits, c.Splits, bytesStr(c.Peak))
	}
	if c.Spikes > 0 {
		f.Detail += fmt.Sprintf(" The memory is kept between %d allocation spike(s), which it will serve again: fixing the spikes (see transient-spike) removes the need for it.", c.Spikes)
	}
}

// madvAdvice is version-aware advice for memory released with MADV_FREE.
func madvAdvice(goVersion, godebug string) []string {
	minor := goMinor(goVersion)
	switch {
	case strings.Contains(godebug, "madvdontneed=0"):
		return []string{"This process runs with GODEBUG=madvdontneed=0, which makes the runtime release memory with MADV_FREE: drop that setting (or set madvdontneed=1) and RSS falls as soon as memory is released.",
			"If MADV_FREE is wanted (it is cheaper), monitor the working set without LazyFree, or RSS minus LazyFree, instead of RSS."}
	case minor >= 12 && minor < 16:
		return []string{fmt.Sprintf("Go %s releases memory with MADV_FREE by default: set GODEBUG=madvdontneed=1, or upgrade to Go 1.16 or later where MADV_DONTNEED is the default.", goVersion)}
	}
	return []string{"Set GODEBUG=madvdontneed=1 so that released memory leaves RSS at once."}
}

// goMinor returns the minor version of "go1.21.3" (0 when unknown).
func goMinor(v string) int {
	v = strings.TrimPrefix(v, "go")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return n
}

// withSetting returns a GODEBUG value with key=value set and the other settings kept.
func withSetting(godebug, key, value string) string {
	var kept []string
	for _, kv := range strings.Split(godebug, ",") {
		if kv = strings.TrimSpace(kv); kv == "" || strings.HasPrefix(kv, key+"=") || strings.HasPrefix(kv, "gctrace=") {
			continue
		}
		kept = append(kept, kv)
	}
	return strings.Join(append(kept, key+"="+value), ",")
}
