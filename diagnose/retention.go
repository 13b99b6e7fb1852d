package diagnose

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// Thresholds of the runtime-retention rule.
const (
	retainMinBytes   = 64 << 20
	retainMinShare   = 0.30 // of RSS
	retainMinPresent = 0.5  // of the readings in the window, and the last one
)

// runtimeRetention reports resident memory far above what the live heap and the GC goal
// explain because the runtime keeps freed pages (heap free, not yet scavenged) or the kernel
// has not reclaimed MADV_FREE pages (LazyFree). It is not a leak.
func runtimeRetention(in *input) outcome {
	fs := in.f
	if fs.Aligned == 0 {
		return cannot(KindRuntimeRetention, 0, "memory could not be split: %s", fs.Gaps[facts.GapAligned])
	}
	ret, share := fs.Retained.Points, fs.RetainedShare.Points
	if len(ret) < 3 || len(ret) != len(share) {
		return cannot(KindRuntimeRetention, 3*time.Second, "memory was split %d time(s): too few to judge", fs.Aligned)
	}
	hits, worst := 0, 0.0
	var worstAt time.Time
	for i := range ret {
		if ret[i].V >= retainMinBytes && share[i].V >= retainMinShare {
			hits++
			if ret[i].V > worst {
				worst, worstAt = ret[i].V, ret[i].T
			}
		}
	}
	if float64(hits) < retainMinPresent*float64(len(ret)) {
		return outcome{}
	}
	// Tell it at the last split that shows it: retention that comes and goes (batches freed
	// and reclaimed) is still retention.
	last := fs.LastSplit
	if last == nil {
		return outcome{}
	}
	lastR := float64(last.RetainedFreeBytes + last.ReleasedResidentBytes)
	comesAndGoes := lastR < retainMinBytes || lastR < retainMinShare*float64(last.RSSBytes)
	if comesAndGoes {
		for i := len(fs.Splits) - 1; i >= 0; i-- {
			if a := &fs.Splits[i]; a.GoSource != "" && a.Time.Equal(worstAt) {
				last = a
				break
			}
		}
		lastR = float64(last.RetainedFreeBytes + last.ReleasedResidentBytes)
	}
	lazy := last.ReleasedResidentBytes >= last.RetainedFreeBytes
	f := Finding{
		Kind:       KindRuntimeRetention,
		Severity:   Warning,
		Confidence: Confirmed,
		Evidence: map[string]float64{
			"rss_bytes":                     float64(last.RSSBytes),
			"live_heap_bytes":               float64(last.LiveHeapBytes),
			"retained_free_heap_bytes":      float64(last.RetainedFreeBytes),
			"released_resident_bytes":       float64(last.ReleasedResidentBytes),
			"retained_share_of_rss":         lastR / float64(max(last.RSSBytes, 1)),
			"retained_peak_bytes":           worst,
			"readings_with_retention_share": float64(hits) / float64(len(ret)),
		},
		Start: ret[0].T, End: last.Time,
	}
	if len(ret) < 5 {
		f.Confidence, f.WatchMoreSeconds = Suspected, 5*fs.Retained.Res.Step.Seconds()
	}

	goVer, godebug := fs.Target.GoVersion, fs.Target.GODEBUG
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
		if fs.Budget > 0 {
			limit := 0.9 * float64(fs.Budget)
			f.AdviceEnv = map[string]string{"GOMEMLIMIT": mib(limit)}
			f.Advice = append(f.Advice, fmt.Sprintf("Set GOMEMLIMIT=%s: with a limit the scavenger keeps the runtime's resident memory under 95%% of it, returning free pages as needed.", mib(limit)))
		} else {
			f.Advice = append(f.Advice, "Set GOMEMLIMIT (say 90% of the memory the process may use): with a limit the scavenger keeps the runtime's resident memory under 95% of it.")
		}
		f.Advice = append(f.Advice, "After a known burst (a batch, a big import), call debug.FreeOSMemory() to return the free heap at once; it runs a GC, so not on a hot path.")
	}
	if comesAndGoes {
		f.Detail += fmt.Sprintf(" It comes and goes: retained in %d of %d readings (at most %s), lower at the end.", hits, len(ret), bytesStr(worst))
	}
	if len(fs.Spikes) > 0 && !lazy {
		f.Severity = Info
		f.Detail += fmt.Sprintf(" The memory is kept between %d allocation spike(s), which it will serve again: fixing the spikes (see transient-spike) removes the need for it.", len(fs.Spikes))
	}
	return found(f)
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
