package agent

import (
	"math"
	"runtime/metrics"

	"github.com/memdoctor/memdoctor/agent/record"
)

// The runtime/metrics the agent reads. Names are checked against metrics.All() of the
// running Go version: an absent one (renamed or not yet there) reads as zero.
const (
	mHeapObjects    = "/memory/classes/heap/objects:bytes"
	mHeapUnused     = "/memory/classes/heap/unused:bytes"
	mHeapFree       = "/memory/classes/heap/free:bytes"
	mHeapReleased   = "/memory/classes/heap/released:bytes"
	mHeapStacks     = "/memory/classes/heap/stacks:bytes"
	mOSStacks       = "/memory/classes/os-stacks:bytes"
	mMSpanInuse     = "/memory/classes/metadata/mspan/inuse:bytes"
	mMSpanFree      = "/memory/classes/metadata/mspan/free:bytes"
	mMCacheInuse    = "/memory/classes/metadata/mcache/inuse:bytes"
	mMCacheFree     = "/memory/classes/metadata/mcache/free:bytes"
	mMetaOther      = "/memory/classes/metadata/other:bytes"
	mProfBuckets    = "/memory/classes/profiling/buckets:bytes"
	mOther          = "/memory/classes/other:bytes"
	mTotal          = "/memory/classes/total:bytes"
	mHeapLive       = "/gc/heap/live:bytes"
	mHeapGoal       = "/gc/heap/goal:bytes"
	mScanStack      = "/gc/scan/stack:bytes"
	mScanGlobals    = "/gc/scan/globals:bytes"
	mAllocBytes     = "/gc/heap/allocs:bytes"
	mAllocObjects   = "/gc/heap/allocs:objects"
	mCycles         = "/gc/cycles/total:gc-cycles"
	mForcedCycles   = "/gc/cycles/forced:gc-cycles"
	mGCTotalCPU     = "/cpu/classes/gc/total:cpu-seconds"
	mGCAssistCPU    = "/cpu/classes/gc/mark/assist:cpu-seconds"
	mGCIdleCPU      = "/cpu/classes/gc/mark/idle:cpu-seconds"
	mGCPauseCPU     = "/cpu/classes/gc/pause:cpu-seconds"
	mTotalCPU       = "/cpu/classes/total:cpu-seconds"
	mGoroutines     = "/sched/goroutines:goroutines"
	mGOGC           = "/gc/gogc:percent"
	mGOMemLimit     = "/gc/gomemlimit:bytes"
	mGOMAXPROCS     = "/sched/gomaxprocs:threads"
	mPausesGC       = "/sched/pauses/total/gc:seconds"
	mPausesGCLegacy = "/gc/pauses:seconds" // before Go 1.22
)

var wantedMetrics = []string{
	mHeapObjects, mHeapUnused, mHeapFree, mHeapReleased, mHeapStacks, mOSStacks,
	mMSpanInuse, mMSpanFree, mMCacheInuse, mMCacheFree, mMetaOther, mProfBuckets, mOther, mTotal,
	mHeapLive, mHeapGoal, mScanStack, mScanGlobals, mAllocBytes, mAllocObjects, mCycles,
	mForcedCycles, mGCTotalCPU, mGCAssistCPU, mGCIdleCPU, mGCPauseCPU, mTotalCPU, mGoroutines,
	mGOGC, mGOMemLimit, mGOMAXPROCS, mPausesGC, mPausesGCLegacy,
}

// metricsReader reads the agent's runtime/metrics with one metrics.Read into a slice
// allocated once. It is not safe for concurrent use.
type metricsReader struct {
	samples []metrics.Sample
	index   map[string]int // name -> position in samples
	pauses  int            // the GC pause histogram in use, -1 if none
}

func newMetricsReader() *metricsReader {
	kinds := make(map[string]metrics.ValueKind)
	for _, d := range metrics.All() {
		kinds[d.Name] = d.Kind
	}
	r := &metricsReader{index: make(map[string]int), pauses: -1}
	for _, name := range wantedMetrics {
		if _, ok := kinds[name]; !ok {
			continue
		}
		if name == mPausesGCLegacy && r.has(mPausesGC) {
			continue
		}
		r.index[name] = len(r.samples)
		r.samples = append(r.samples, metrics.Sample{Name: name})
	}
	for _, name := range []string{mPausesGC, mPausesGCLegacy} {
		if i, ok := r.index[name]; ok && kinds[name] == metrics.KindFloat64Histogram {
			r.pauses = i
			break
		}
	}
	return r
}

func (r *metricsReader) has(name string) bool {
	_, ok := r.index[name]
	return ok
}

// read takes one reading and fills g. It allocates nothing once the pause histogram exists.
func (r *metricsReader) read(g *record.GoMem) {
	metrics.Read(r.samples)
	*g = record.GoMem{
		Source:            "runtime/metrics",
		HeapObjectsBytes:  r.u(mHeapObjects),
		HeapUnusedBytes:   r.u(mHeapUnused),
		HeapFreeBytes:     r.u(mHeapFree),
		HeapReleasedBytes: r.u(mHeapReleased),
		HeapStacksBytes:   r.u(mHeapStacks),
		OSStacksBytes:     r.u(mOSStacks),
		MetadataBytes:     r.u(mMSpanInuse) + r.u(mMSpanFree) + r.u(mMCacheInuse) + r.u(mMCacheFree) + r.u(mMetaOther),
		OtherBytes:        r.u(mProfBuckets) + r.u(mOther),
		TotalBytes:        r.u(mTotal),
		HeapLiveBytes:     r.u(mHeapLive),
		HeapGoalBytes:     r.u(mHeapGoal),
		StackScanBytes:    r.u(mScanStack),
		GlobalsScanBytes:  r.u(mScanGlobals),
		AllocBytesTotal:   r.u(mAllocBytes),
		AllocObjectsTotal: r.u(mAllocObjects),
		GCCycles:          r.u(mCycles),
		GCForcedCycles:    r.u(mForcedCycles),
		GCTotalSeconds:    r.f(mGCTotalCPU),
		GCAssistSeconds:   r.f(mGCAssistCPU),
		GCIdleSeconds:     r.f(mGCIdleCPU),
		GCPauseSeconds:    r.f(mGCPauseCPU),
		CPUTotalSeconds:   r.f(mTotalCPU),
		Goroutines:        int(r.u(mGoroutines)),
		GOGC:              gogc(r.u(mGOGC), r.has(mGOGC)),
		GOMemLimitBytes:   r.u(mGOMemLimit),
		GOMAXPROCS:        int(r.u(mGOMAXPROCS)),
		PauseTotalSeconds: r.pauseTotal(),
	}
}

func (r *metricsReader) u(name string) uint64 {
	i, ok := r.index[name]
	if !ok || r.samples[i].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return r.samples[i].Value.Uint64()
}

func (r *metricsReader) f(name string) float64 {
	i, ok := r.index[name]
	if !ok || r.samples[i].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return r.samples[i].Value.Float64()
}

// gogc maps /gc/gogc:percent to record.GoMem.GOGC: GOGC=off reads as a negative number
// stored in a uint64, which becomes -1.
func gogc(v uint64, present bool) int {
	switch {
	case !present:
		return 0
	case v > math.MaxInt32:
		return -1
	}
	return int(v)
}

// pauseTotal estimates the total stop-the-world GC pause time from the pause histogram:
// each bucket's count times its midpoint (its lower bound for the open-ended last one).
func (r *metricsReader) pauseTotal() float64 {
	if r.pauses < 0 || r.samples[r.pauses].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := r.samples[r.pauses].Value.Float64Histogram()
	return histogramSum(h.Counts, h.Buckets)
}

// histogramSum is the estimated sum of a runtime/metrics histogram (len(buckets) ==
// len(counts)+1; the outer bounds may be infinite).
func histogramSum(counts []uint64, buckets []float64) float64 {
	var sum float64
	for i, n := range counts {
		if n == 0 || i+1 >= len(buckets) {
			continue
		}
		lo, hi := buckets[i], buckets[i+1]
		var v float64
		switch {
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			continue
		case math.IsInf(lo, -1):
			v = hi
		case math.IsInf(hi, 1):
			v = lo
		default:
			v = (lo + hi) / 2
		}
		sum += float64(n) * v
	}
	return sum
}
