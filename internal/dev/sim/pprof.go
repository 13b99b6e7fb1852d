package sim

import (
	"bytes"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/culprit"
)

// protoBuilder builds one pprof profile, interning functions and locations.
type protoBuilder struct {
	p    *profile.Profile
	fns  map[string]*profile.Function
	locs map[string]*profile.Location
}

func newProtoBuilder(periodType, periodUnit string, period int64, t time.Time, types ...string) *protoBuilder {
	p := &profile.Profile{
		PeriodType: &profile.ValueType{Type: periodType, Unit: periodUnit},
		Period:     period,
		TimeNanos:  t.UnixNano(),
		Mapping:    []*profile.Mapping{{ID: 1, Start: 0x400000, Limit: 0x2000000, File: "/app/svc", HasFunctions: true}},
	}
	for _, st := range types {
		typ, unit, _ := strings.Cut(st, "/")
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: typ, Unit: unit})
	}
	return &protoBuilder{p: p, fns: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
}

// location returns the location of a call in function fn: one per function, at a line of
// its own that stays the same in every profile of a session, or at the line fr gives after
// a colon ("example.com/svc/ledger.(*Store).balance:57": one location per line).
func (b *protoBuilder) location(fr string) *profile.Location {
	if l := b.locs[fr]; l != nil {
		return l
	}
	fn, line := frameLine(fr)
	f := b.fns[fn]
	h := fnv.New32a()
	h.Write([]byte(fn))
	if f == nil {
		f = &profile.Function{ID: uint64(len(b.fns) + 1), Name: fn, SystemName: fn, Filename: sourceFile(fn), StartLine: int64(15 + h.Sum32()%900)}
		b.fns[fn] = f
		b.p.Function = append(b.p.Function, f)
	}
	if line == 0 {
		line = f.StartLine + 5
	}
	id := uint64(len(b.locs) + 1)
	l := &profile.Location{ID: id, Mapping: b.p.Mapping[0], Address: 0x400000 + 0x40*uint64(h.Sum32()%0x60000) + uint64(line) + id,
		Line: []profile.Line{{Function: f, Line: line}}}
	b.locs[fr] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

func (b *protoBuilder) sample(stack []string, values []int64, numLabel map[string][]int64) *profile.Sample {
	s := &profile.Sample{Value: values, NumLabel: numLabel}
	for _, fn := range stack {
		s.Location = append(s.Location, b.location(fn))
	}
	b.p.Sample = append(b.p.Sample, s)
	return s
}

// bytes returns the profile gzipped, as the pprof endpoints serve it.
func (b *protoBuilder) bytes() ([]byte, error) {
	if err := b.p.CheckValid(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := b.p.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sourceFile makes up the source file of a function: the standard library under GOROOT,
// the service under /src/svc.
func sourceFile(fn string) string {
	pkg := packagePath(fn)
	base := pkg[strings.LastIndex(pkg, "/")+1:]
	switch {
	case strings.HasPrefix(pkg, MainModule):
		return "/src/svc" + strings.TrimPrefix(pkg, MainModule) + "/" + base + ".go"
	case pkg == "main":
		return "/src/svc/main.go"
	case strings.Contains(strings.Split(pkg, "/")[0], "."): // a dependency, in the module cache
		return "/root/go/pkg/mod/" + pkg + "@v1.4.0/" + base + ".go"
	}
	return "/usr/local/go/src/" + pkg + "/" + base + ".go"
}

// packagePath is the import path of a function's package.
func packagePath(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// heapProfile is the heap profile as of the last completed GC.
func (s *siteSet) heapProfile(t time.Time) ([]byte, error) {
	b := newProtoBuilder("space", "bytes", profileRate, t,
		"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes")
	for _, st := range s.all {
		if st.gcAllocN == 0 && st.gcLiveN == 0 {
			continue
		}
		scale := 1 / st.prob
		v := func(n int64) int64 { return int64(math.Round(float64(n) * scale)) }
		w := func(n int64) int64 { return int64(math.Round(float64(n) * st.objSize * scale)) }
		b.sample(st.stack, []int64{v(st.gcAllocN), w(st.gcAllocN), v(st.gcLiveN), w(st.gcLiveN)},
			map[string][]int64{"bytes": {int64(st.objSize)}})
	}
	return b.bytes()
}

var (
	netRead = []string{"runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait",
		"internal/poll.(*pollDesc).wait", "internal/poll.(*pollDesc).waitRead", "internal/poll.(*FD).Read",
		"net.(*netFD).Read", "net.(*conn).Read"}
	idleConn   = append(append([]string{}, netRead...), "net/http.(*connReader).Read", "bufio.(*Reader).fill", "bufio.(*Reader).Peek", "net/http.(*conn).serve")
	bgRead     = append(append([]string{}, netRead...), "net/http.(*connReader).backgroundRead")
	acceptLoop = []string{"runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait",
		"internal/poll.(*pollDesc).wait", "internal/poll.(*pollDesc).waitRead", "internal/poll.(*FD).Accept",
		"net.(*netFD).accept", "net.(*TCPListener).accept", "net.(*TCPListener).Accept", "net/http.(*Server).Serve",
		"net/http.(*Server).ListenAndServe", "main.main", "runtime.main"}
	workerLoop  = []string{"runtime.gopark", "runtime.selectgo", "example.com/svc/worker.(*Pool).run"}
	janitorLoop = []string{"runtime.gopark", "runtime.selectgo", "example.com/svc/cache.(*Janitor).loop"}
	signalLoop  = []string{"os/signal.signal_recv", "os/signal.loop"}
	profiling   = []string{"runtime.goroutineProfileWithLabels", "runtime.pprof_goroutineProfileWithLabels",
		"runtime/pprof.writeRuntimeProfile", "runtime/pprof.writeGoroutine", "runtime/pprof.(*Profile).WriteTo",
		"net/http/pprof.handler.ServeHTTP", "net/http/pprof.Index", "net/http.HandlerFunc.ServeHTTP",
		"net/http.(*ServeMux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	inflightReq = handler("runtime.gopark", "runtime.selectgo", "example.com/svc/db.(*Pool).query", "example.com/svc/api.(*Server).handleOrder")
)

// waitFrames are the runtime frames above a goroutine blocked in a way of waiting.
var waitFrames = map[string][]string{
	"chansend": {"runtime.gopark", "runtime.chansend", "runtime.chansend1"},
	"chanrecv": {"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1"},
	"select":   {"runtime.gopark", "runtime.selectgo"},
}

// spinFrames are what a profile finds above a goroutine that never blocks: preempted, in a
// non-blocking channel operation, or running its own code.
var spinFrames = [][]string{{"runtime.asyncPreempt2", "runtime.asyncPreempt"}, {"runtime.selectnbrecv"}, {}}

// goroutineProfile is the goroutine profile at the current instant of m.
func (s *siteSet) goroutineProfile(m *model, t time.Time) ([]byte, int, error) {
	b := newProtoBuilder("goroutine", "count", 1, t, "goroutine/count")
	steady := m.p.Goroutines - s.workers - 4
	inflight := int(m.inflight)
	leaked := int(m.p.GoroutineLeakRate * m.t)
	groups := []struct {
		stack []string
		n     int
	}{
		{idleConn, max(1, steady)},
		{bgRead, max(0, inflight/2)},
		{inflightReq, inflight - inflight/2},
		{acceptLoop, 1},
		{workerLoop, s.workers},
		{janitorLoop, 1},
		{signalLoop, 1},
		{profiling, 1},
	}
	var libGroups int // the last ones of groups are the library's
	if leaked > 0 && s.lib != nil {
		for _, st := range s.lib.stacks {
			groups = append(groups, struct {
				stack []string
				n     int
			}{st, leaked / len(s.lib.stacks)})
		}
		libGroups = len(s.lib.stacks)
	} else if leaked > 0 && m.p.Spin {
		// Caught running or preempted, at whatever line of their loop.
		for i, top := range spinFrames {
			n := leaked / len(spinFrames)
			if i == 0 {
				n += leaked % len(spinFrames)
			}
			groups = append(groups, struct {
				stack []string
				n     int
			}{append(append([]string{}, top...), s.leakFn+":"+strconv.Itoa(40+3*i)), n})
		}
	} else if leaked > 0 {
		groups = append(groups, struct {
			stack []string
			n     int
		}{append(append([]string{}, waitFrames[s.leakWait]...), s.leakFn), leaked})
	}
	n := 0
	for i, g := range groups {
		if g.n > 0 {
			smp := b.sample(g.stack, []int64{int64(g.n)}, nil)
			if i >= len(groups)-libGroups && m.p.Creators { // who started them, as a read from memory records it
				smp.Label = map[string][]string{culprit.CreatedByLabel: {s.lib.creator}}
			}
			n += g.n
		}
	}
	data, err := b.bytes()
	return data, n, err
}
