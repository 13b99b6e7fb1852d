package lab

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// The holder scenarios each leak through one kind of holder: what `memdoctor holders` must
// name as the reference path from a GC root to the leaked records. They are not in All (the
// accuracy matrix judges verdicts, these judge paths); HolderScenarios lists them and Lookup
// finds them.

// HolderExpect is the path memdoctor holders must name for a holder scenario.
type HolderExpect struct {
	Site string // the culprit function that allocates the leaked records
	Root string // the root's kind: global, goroutine, finalizer
	Path string // what the heaviest path's expression must contain
	// Cut is what the first cut's expression must contain: the object whose references, cut,
	// free the leak; "" when no one object holds the records (a finalizer keeps each alone).
	Cut string
	// Running is, when one function's goroutine holds the records in its frame for as long as
	// it runs, that function: a reading that catches it running names them from that frame
	// (a goroutine root), through the same variable as Path. A timer's callback runs on a
	// goroutine of its own, and between its firing and its Reset only that goroutine holds what
	// it captured. "" for none.
	Running string
}

// holderRecord is the size of each leaked record: large enough that the heap profile samples
// many of them within seconds at the rate the scenarios set.
const holderRecord = 16 << 10

// holderRate is the heap profile's sampling rate in these scenarios: one sample per 4 KiB, so
// a test sees hundreds of sampled records in a few seconds.
const holderRate = 4096

// holderCap bounds what a scenario leaks, so a forgotten one does not take the machine.
const holderCap = 4000

var holderScenarios = []func() Scenario{
	holderGlobalMap, holderServerField, holderStackSlice, holderClosure, holderChanBuffer,
	holderSyncMapKind, holderSubslice, holderTimer, holderFinalizer,
	holderInterfaceRegistry, holderStaticStruct, holderGenericCache,
}

// HolderScenarios returns the holder scenarios, sorted by name.
func HolderScenarios() []Scenario {
	return made(holderScenarios)
}

// leakEvery runs step every interval until ctx is done or step has run holderCap times.
func leakEvery(ctx context.Context, env Env, name, how string, step func()) error {
	env = env.withDefaults()
	runtime.MemProfileRate = holderRate
	fmt.Fprintf(env.Stdout, "%s: leaking a %d KiB record every 10ms through %s\n", name, holderRecord>>10, how)
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if n < holderCap {
				step()
			}
		}
	}
}

func holderScenario(name, story string, expect HolderExpect, run func(context.Context, Env) error) Scenario {
	return Scenario{Name: name, Story: story, Holder: &expect, Run: run}
}

// --- a global map ---

type holderSession struct {
	id      int
	payload []byte
}

var (
	holderSessionsMu sync.Mutex
	holderSessions   = map[int]*holderSession{}
)

func holderGlobalMap() Scenario {
	return holderScenario("holder-global-map",
		"A session store keeps every session in a package-level map and never deletes one: the map holds each session's payload.",
		HolderExpect{Site: labPkg + ".rememberSession", Root: "global", Path: labPkg + ".holderSessions[value].payload", Cut: labPkg + ".holderSessions"},
		func(ctx context.Context, env Env) error {
			i := 0
			return leakEvery(ctx, env, "holder-global-map", "a package-level map", func() { i++; rememberSession(i) })
		})
}

//go:noinline
func rememberSession(i int) {
	holderSessionsMu.Lock()
	defer holderSessionsMu.Unlock()
	holderSessions[i] = &holderSession{id: i, payload: make([]byte, holderRecord)}
}

// labPkg is this package's path, as function and variable names carry it.
const labPkg = "github.com/memdoctor/memdoctor/lab"

// --- a field of a long-lived server struct ---

type holderServer struct {
	name   string
	recent [][]byte // every response, kept "for debugging"
}

func holderServerField() Scenario {
	return holderScenario("holder-server-field",
		"A server keeps every response it sent in a field of its long-lived struct, meant for a debug page, and never trims it.",
		HolderExpect{Site: labPkg + ".(*holderServer).respond", Root: "goroutine", Path: "s.recent[i]", Cut: "s.recent"},
		func(ctx context.Context, env Env) error {
			s := &holderServer{name: "api"}
			done := make(chan error)
			go func() { done <- s.serve(ctx, env) }()
			return <-done
		})
}

//go:noinline
func (s *holderServer) serve(ctx context.Context, env Env) error {
	err := leakEvery(ctx, env, "holder-server-field", "a field of the server struct", s.respond)
	fmt.Fprintf(env.withDefaults().Stdout, "%s: stopped with %d responses kept\n", s.name, len(s.recent))
	return err
}

//go:noinline
func (s *holderServer) respond() {
	s.recent = append(s.recent, make([]byte, holderRecord))
}

// --- a slice in a goroutine's stack frame ---

func holderStackSlice() Scenario {
	return holderScenario("holder-stack-slice",
		"A batching goroutine appends every record to a local slice meant to be flushed when full, and the flush never comes.",
		HolderExpect{Site: labPkg + ".newPendingRecord", Root: "goroutine", Path: labPkg + ".collectPending.pending[i]", Cut: labPkg + ".collectPending.pending"},
		func(ctx context.Context, env Env) error {
			env = env.withDefaults()
			runtime.MemProfileRate = holderRate
			fmt.Fprintf(env.Stdout, "holder-stack-slice: leaking a %d KiB record every 10ms into a goroutine's local slice\n", holderRecord>>10)
			collectPending(ctx)
			return nil
		})
}

//go:noinline
func collectPending(ctx context.Context) {
	var pending [][]byte
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			runtime.KeepAlive(pending)
			return
		case <-t.C:
			if len(pending) < holderCap {
				pending = append(pending, newPendingRecord())
			}
		}
	}
}

//go:noinline
func newPendingRecord() []byte { return make([]byte, holderRecord) }

// --- a closure a goroutine captured ---

func holderClosure() Scenario {
	return holderScenario("holder-closure",
		"A goroutine runs a callback that appends to a history slice it captured, for an undo feature nobody uses.",
		HolderExpect{Site: labPkg + ".newHistoryRecord", Root: "goroutine", Path: ".history[i]", Cut: ".history"},
		func(ctx context.Context, env Env) error {
			var history [][]byte
			record := func() {
				if len(history) < holderCap {
					history = append(history, newHistoryRecord())
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = leakEvery(ctx, env, "holder-closure", "a slice a closure captured", record)
			}()
			<-done
			return nil
		})
}

//go:noinline
func newHistoryRecord() []byte { return make([]byte, holderRecord) }

// --- a channel's buffer ---

var holderBacklog = make(chan []byte, holderCap)

func holderChanBuffer() Scenario {
	return holderScenario("holder-chan-buffer",
		"Events are queued on a buffered channel for an exporter that was never started: the buffer fills with every event.",
		HolderExpect{Site: labPkg + ".queueEvent", Root: "global", Path: labPkg + ".holderBacklog.buf[i]", Cut: labPkg + ".holderBacklog"},
		func(ctx context.Context, env Env) error {
			return leakEvery(ctx, env, "holder-chan-buffer", "a channel's buffer", queueEvent)
		})
}

//go:noinline
func queueEvent() {
	select {
	case holderBacklog <- make([]byte, holderRecord):
	default:
	}
}

// --- a sync.Map ---

var holderSyncMap sync.Map

func storePage(i int) {
	holderSyncMap.Store(i, newSyncMapRecord())
}

//go:noinline
func newSyncMapRecord() []byte { return make([]byte, holderRecord) }

func holderSyncMapKind() Scenario {
	return holderScenario("holder-sync-map",
		"A cache of rendered pages is a sync.Map keyed by URL with no eviction.",
		HolderExpect{Site: labPkg + ".newSyncMapRecord", Root: "global", Path: labPkg + ".holderSyncMap[value].([]uint8)", Cut: labPkg + ".holderSyncMap"},
		func(ctx context.Context, env Env) error {
			i := 0
			return leakEvery(ctx, env, "holder-sync-map", "a sync.Map", func() { i++; storePage(i) })
		})
}

// --- a small sub-slice pinning a large backing array ---

var holderHeaders [][]byte

func holderSubslice() Scenario {
	return holderScenario("holder-subslice",
		"A parser keeps the first 16 bytes of each 16 KiB message as its header, a sub-slice that pins the whole message's array.",
		HolderExpect{Site: labPkg + ".readMessage", Root: "global", Path: labPkg + ".holderHeaders[i]", Cut: labPkg + ".holderHeaders"},
		func(ctx context.Context, env Env) error {
			return leakEvery(ctx, env, "holder-subslice", "a 16-byte sub-slice of each message", func() {
				msg := readMessage()
				holderHeaders = append(holderHeaders, msg[:16])
			})
		})
}

//go:noinline
func readMessage() []byte { return make([]byte, holderRecord) }

// --- a timer's callback ---

func holderTimer() Scenario {
	return holderScenario("holder-timer",
		"A periodic job re-arms itself with time.AfterFunc; its callback appends each run's report to a slice it captured.",
		HolderExpect{Site: labPkg + ".newTimerReport", Root: "global", Path: ".reports[i]", Cut: ".reports", Running: labPkg + ".startReports.func1"},
		func(ctx context.Context, env Env) error {
			env = env.withDefaults()
			runtime.MemProfileRate = holderRate
			fmt.Fprintf(env.Stdout, "holder-timer: leaking a %d KiB record every 10ms through a timer's callback\n", holderRecord>>10)
			startReports()
			<-ctx.Done()
			return nil
		})
}

// startReports arms the job and forgets its timer: from then on only the runtime's timer heap
// holds it, its callback and what the callback captured.
//
//go:noinline
func startReports() {
	var reports [][]byte
	var t *time.Timer
	t = time.AfterFunc(10*time.Millisecond, func() {
		if len(reports) < holderCap {
			reports = append(reports, newTimerReport())
		}
		t.Reset(10 * time.Millisecond)
	})
}

//go:noinline
func newTimerReport() []byte { return make([]byte, holderRecord) }

// --- an object kept by a finalizer ---

// holderConn closes its file in a finalizer; it points to itself (a back-reference from its
// buffer pool), and the runtime never finalizes an object its own referents keep reachable:
// the finalizer keeps it, and its buffer, for ever.
type holderConn struct {
	buf  []byte
	self *holderConn
}

func holderFinalizer() Scenario {
	return holderScenario("holder-finalizer",
		"Connections set a finalizer to close themselves and keep a pointer to themselves; the runtime never runs a finalizer on an object its own referents keep alive, so every connection and its buffer stay.",
		HolderExpect{Site: labPkg + ".openConn", Root: "finalizer", Path: ".buf"},
		func(ctx context.Context, env Env) error {
			return leakEvery(ctx, env, "holder-finalizer", "finalizers on self-referencing objects", func() { openConn() })
		})
}

//go:noinline
func openConn() {
	c := &holderConn{buf: make([]byte, holderRecord)}
	c.self = c
	runtime.SetFinalizer(c, func(c *holderConn) { c.buf = nil })
}
