package lab

import (
	"context"
	"hash/crc32"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func madvfreeRetention() Scenario {
	return Scenario{
		Name: "madvfree-retention",
		Story: "A service runs a batch job every 15 seconds that builds a working set of about 350 " +
			"MiB of short-lived buffers, drops it, and calls debug.FreeOSMemory, while its live " +
			"heap stays near 10 MiB. It runs with GODEBUG=madvdontneed=0, so the runtime returns " +
			"the freed pages with MADV_FREE: the kernel takes them back only under memory " +
			"pressure, and until then they stay in RSS as LazyFree. RSS sits at the peak while " +
			"pprof shows a few MiB, and the service looks like it leaks. It does not: the memory " +
			"is reclaimable and the runtime holds no live data there. The fix is to leave " +
			"madvdontneed at its default (MADV_DONTNEED since Go 1.16) so RSS falls at once, " +
			"and to look at LazyFree in /proc/PID/smaps_rollup before calling it a leak; " +
			"reusing the batch's buffers avoids the churn altogether.",
		Expect: Expect{
			Kinds: []string{kindRuntimeRetention},
			// The batch job every 15 s is a 350 MiB transient spike by design.
			Allowed: []string{kindTransientSpike},
			// RSS far above what Go accounts for is LazyFree here, not
			// memory from outside the Go runtime.
			Absent:   []string{kindHeapLeak, kindNonGoMemory},
			Env:      []string{"GODEBUG=madvdontneed=0"},
			Watch:    36 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runMadvfreeRetention,
	}
}

const (
	batchBuffers    = 350
	batchBufferSize = 1 << 20
	batchEvery      = 15 * time.Second
)

func runMadvfreeRetention(ctx context.Context, env Env) error {
	env = env.withDefaults()
	if !strings.Contains(os.Getenv("GODEBUG"), "madvdontneed=0") {
		env.Logger.Warn("GODEBUG=madvdontneed=0 is not set: freed memory goes back with MADV_DONTNEED and RSS falls, so the retention does not show",
			"scenario", "madvfree-retention")
	}
	job := newBatchJob(10 << 20)
	return serve(ctx, env, service{
		name: "madvfree-retention",
		routes: map[string]http.HandlerFunc{
			"POST /batch": job.handleBatch,
			"GET /status": job.handleStatus,
		},
		loads: []load{
			{workers: 1, every: batchEvery, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodPost, path: "/batch"})
			}},
			{workers: 1, every: 250 * time.Millisecond, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodGet, path: "/status"})
			}},
		},
	})
}

// batchJob keeps a small index (the live heap) and runs batches that need a
// large temporary working set.
type batchJob struct {
	index    [][]byte // long-lived results
	template []byte   // what a batch copies into its buffers

	mu       sync.Mutex // one batch at a time
	checksum uint32
	runs     atomic.Int64
}

func newBatchJob(indexBytes int) *batchJob {
	j := &batchJob{template: make([]byte, batchBufferSize)}
	for i := range j.template {
		j.template[i] = byte(i * 31)
	}
	for range indexBytes / (64 << 10) {
		entry := make([]byte, 64<<10)
		copy(entry, j.template)
		j.index = append(j.index, entry)
	}
	return j
}

func (j *batchJob) handleBatch(w http.ResponseWriter, r *http.Request) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.checksum = j.runBatch()
	j.runs.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

// runBatch builds the working set, processes it, drops it and hands the
// memory back to the OS, as batch code that "cleans up after itself" does.
func (j *batchJob) runBatch() uint32 {
	work := make([][]byte, 0, batchBuffers)
	for range batchBuffers {
		buf := make([]byte, batchBufferSize)
		copy(buf, j.template)
		work = append(work, buf)
	}
	var sum uint32
	for _, buf := range work {
		sum = crc32.Update(sum, crc32.IEEETable, buf)
	}
	clear(work) // drop the working set
	debug.FreeOSMemory()
	return sum
}

func (j *batchJob) handleStatus(w http.ResponseWriter, r *http.Request) {
	var b [32]byte
	w.Header().Set("Content-Type", "text/plain")
	w.Write(strconv.AppendInt(b[:0], j.runs.Load(), 10))
}
