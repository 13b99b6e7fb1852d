package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/memdoctor/memdoctor/breakdown"
)

func init() { register(KindRuntimeRetention, runtimeRetention) }

// Thresholds of the runtime-retention rule.
const (
	retainMinBytes   = 64 << 20
	retainMinShare   = 0.30 // of RSS
	retainMinPresent = 0.5  // of the readings in the window, and the last one
)

// runtimeRetention reports resident memory far above what the live heap and the GC goal
// explain because the runtime keeps freed pages (heap free, not yet scavenged) or the kernel
// has not reclaimed MADV_FREE pages (LazyFree). It is not a leak.
func runtimeRetention(in *Input) []Finding {
	bs := in.Breakdowns()
	if len(bs) < 3 {
		return nil
	}
	retained := func(b *breakdown.At) uint64 { return b.RetainedFreeBytes + b.ReleasedResidentBytes }
	hits := 0
	var worst *breakdown.At
	for _, b := range bs {
		r := retained(b)
		if r >= retainMinBytes && float64(r) >= retainMinShare*float64(b.RSSBytes) {
			hits++
			if worst == nil || r > retained(worst) {
				worst = b
			}
		}
	}
	last := bs[len(bs)-1]
	lastR := retained(last)
	if float64(hits) < retainMinPresent*float64(len(bs)) || lastR < retainMinBytes || float64(lastR) < retainMinShare*float64(last.RSSBytes) {
		return nil
	}
	lazy := last.ReleasedResidentBytes >= last.RetainedFreeBytes
	f := Finding{
		Kind:     KindRuntimeRetention,
		Severity: Warning,
		Evidence: map[string]float64{
			"rss_bytes":                     float64(last.RSSBytes),
			"live_heap_bytes":               float64(last.LiveHeapBytes),
			"retained_free_heap_bytes":      float64(last.RetainedFreeBytes),
			"released_resident_bytes":       float64(last.ReleasedResidentBytes),
			"retained_share_of_rss":         float64(lastR) / float64(last.RSSBytes),
			"retained_peak_bytes":           float64(retained(worst)),
			"readings_with_retention_share": float64(hits) / float64(len(bs)),
		},
		Start: bs[0].Time, End: last.Time,
	}
	goVer := in.Session.Manifest.Target.GoVersion
	godebug := in.Session.Manifest.Target.GODEBUG
	if lazy {
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
		if in.Budget > 0 {
			limit := 0.9 * float64(in.Budget)
			f.AdviceEnv = map[string]string{"GOMEMLIMIT": mib(limit)}
			f.Advice = append(f.Advice, fmt.Sprintf("Set GOMEMLIMIT=%s: with a limit the scavenger keeps the runtime's resident memory under 95%% of it, returning free pages as needed.", mib(limit)))
		} else {
			f.Advice = append(f.Advice, "Set GOMEMLIMIT (say 90% of the memory the process may use): with a limit the scavenger keeps the runtime's resident memory under 95% of it.")
		}
		f.Advice = append(f.Advice, "After a known burst (a batch, a big import), call debug.FreeOSMemory() to return the free heap at once; it runs a GC, so not on a hot path.")
	}
	if spikes := in.Spikes(); len(spikes) > 0 && !lazy {
		f.Severity = Info
		f.Detail += fmt.Sprintf(" The memory is kept between %d allocation spike(s), which it will serve again: fixing the spikes (see transient-spike) removes the need for it.", len(spikes))
	}
	return []Finding{f}
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
