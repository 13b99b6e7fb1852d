package sim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// MainModule is the module path of every simulated service.
const MainModule = "example.com/svc"

// httpRoot is what a handler runs under.
var httpRoot = []string{"net/http.HandlerFunc.ServeHTTP", "net/http.(*ServeMux).ServeHTTP",
	"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}

func handler(frames ...string) []string { return append(frames, httpRoot...) }

// A stackPool is a set of alternative allocation stacks for one role, leaf first; the
// culprit of each is its innermost frame in the main module.
var (
	garbagePool = [][]string{
		handler("encoding/json.(*decodeState).literalStore", "encoding/json.(*decodeState).object",
			"encoding/json.(*decodeState).value", "encoding/json.(*decodeState).unmarshal", "encoding/json.Unmarshal",
			"example.com/svc/api.(*Server).decodeOrder", "example.com/svc/api.(*Server).handleOrder"),
		handler("bytes.growSlice", "bytes.(*Buffer).grow", "bytes.(*Buffer).WriteString",
			"example.com/svc/render.(*Page).row", "example.com/svc/render.(*Page).Render", "example.com/svc/api.(*Server).handlePage"),
		handler("strings.(*Builder).grow", "strings.(*Builder).WriteString", "example.com/svc/logx.(*Logger).format",
			"example.com/svc/logx.(*Logger).Info", "example.com/svc/api.(*Server).logRequest"),
		{"net/http.Header.Clone", "example.com/svc/proxy.(*Router).rewrite", "example.com/svc/proxy.(*Router).ServeHTTP",
			"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"},
		{"bufio.NewReaderSize", "net/http.newBufioReader", "net/http.(*conn).serve"},
		{"net/textproto.(*Reader).ReadMIMEHeader", "net/http.readRequest", "net/http.(*conn).readRequest", "net/http.(*conn).serve"},
		handler("example.com/svc/metrics.(*Histogram).Observe", "example.com/svc/api.(*Server).instrument.func1"),
		handler("compress/flate.NewWriter", "compress/gzip.(*Writer).Write", "example.com/svc/api.(*Server).writeGzip"),
	}
	// climbStack serializes a backlog that grows on every request.
	climbStack = handler("encoding/json.(*encodeState).marshal", "encoding/json.Marshal",
		"example.com/svc/notify.(*Retrier).snapshot", "example.com/svc/notify.(*Retrier).flush", "example.com/svc/api.(*Server).handleNotify")
	steadyStack = []string{"example.com/svc/catalog.(*Index).add", "example.com/svc/catalog.Load", "main.run", "main.main", "runtime.main"}
	leakPool    = [][]string{
		handler("example.com/svc/session.(*Store).add", "example.com/svc/session.(*Store).Open", "example.com/svc/api.(*Server).handleLogin"),
		handler("example.com/svc/ingest.(*Assembler).bufferSegment", "example.com/svc/ingest.(*Assembler).Add", "example.com/svc/ingest.(*Server).handleIngest"),
		handler("example.com/svc/audit.(*Trail).record", "example.com/svc/payments.(*Service).Charge", "example.com/svc/api.(*Server).handleCharge"),
		handler("bytes.Clone", "example.com/svc/idem.(*Keys).remember", "example.com/svc/api.(*Server).handlePayment"),
	}
	// libraryLeakStacks: a dependency keeps what the program hands it (a cache never pruned,
	// a registry of every key seen), under the program's call.
	libraryLeakStacks = [][]string{
		handler("github.com/acme/lru.(*Cache).insert", "github.com/acme/lru.(*Cache).Set",
			"example.com/svc/session.(*Store).save", "example.com/svc/api.(*Server).handleLogin"),
		handler("github.com/acme/metrics.(*Registry).getOrCreate", "github.com/acme/metrics.(*Registry).Counter",
			"example.com/svc/api.(*Server).countRoute", "example.com/svc/api.(*Server).instrument.func1"),
	}
	spikePool = [][]string{
		{"io.ReadAll", "example.com/svc/upload.(*Handler).decodeWhole", "example.com/svc/upload.(*Handler).ServeHTTP",
			"net/http.(*ServeMux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"},
		{"encoding/json.(*decodeState).literalStore", "encoding/json.(*decodeState).array", "encoding/json.(*decodeState).value",
			"encoding/json.(*decodeState).unmarshal", "encoding/json.Unmarshal", "example.com/svc/imports.(*Importer).importBatch",
			"example.com/svc/imports.(*Importer).run"},
		handler("example.com/svc/report.(*Builder).buildMatrix", "example.com/svc/report.(*Builder).Build", "example.com/svc/api.(*Server).handleExport"),
		{"bytes.growSlice", "bytes.(*Buffer).ReadFrom", "example.com/svc/archive.(*Restorer).inflate",
			"example.com/svc/archive.(*Restorer).Restore", "example.com/svc/jobs.(*Runner).run"},
	}
	batchPool = [][]string{
		{"example.com/svc/batch.(*Job).buildWorkingSet", "example.com/svc/batch.(*Job).Run", "example.com/svc/batch.(*Scheduler).loop"},
		{"example.com/svc/reindex.(*Indexer).loadSegment", "example.com/svc/reindex.(*Indexer).Rebuild", "example.com/svc/reindex.(*Indexer).loop"},
	}
	// spreadShared is the function the sites of a spread leak share; spreadPool its sites,
	// and a standard library's site that keeps the request's headers too, outside it.
	spreadShared = "example.com/svc/session.(*Middleware).ServeHTTP"
	spreadPool   = [][]string{
		handler("example.com/svc/api.(*Server).renderCart", "example.com/svc/api.(*Server).handleCart", spreadShared),
		handler("example.com/svc/session.(*Store).open", spreadShared),
		handler("example.com/svc/session.(*Registry).index", spreadShared),
		handler("example.com/svc/audit.(*Trail).record", spreadShared),
		handler("net/url.parseQuery", "net/url.ParseQuery", "net/url.(*URL).Query", spreadShared),
	}
	exportPool = [][]string{
		handler("bytes.growSlice", "bytes.(*Buffer).Write", "example.com/svc/export.(*Catalog).render", "example.com/svc/export.(*Catalog).handleCSV"),
		{"encoding/csv.(*Writer).Write", "example.com/svc/reports.(*Nightly).writeRows", "example.com/svc/reports.(*Nightly).Run", "example.com/svc/jobs.(*Runner).run"},
	}
	// observerStack is memdoctor's own goroutine profile, served by net/http/pprof: the
	// records of every goroutine's stack.
	observerStack = []string{"runtime/pprof.writeRuntimeProfile", "runtime/pprof.writeGoroutine", "runtime/pprof.(*Profile).WriteTo",
		"net/http/pprof.handler.ServeHTTP", "net/http/pprof.Index", "net/http.HandlerFunc.ServeHTTP",
		"net/http.(*ServeMux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	cachePool = [][]string{
		handler("example.com/svc/cache.(*LRU).Put", "example.com/svc/cache.(*LRU).GetOrLoad", "example.com/svc/api.(*Server).handleProduct"),
		handler("example.com/svc/render.(*PageCache).store", "example.com/svc/render.(*PageCache).Get", "example.com/svc/api.(*Server).handlePage"),
	}
	// goroutineLeakPool holds the blocked function and how it waits.
	goroutineLeakPool = []struct{ fn, wait string }{
		{"example.com/svc/search.(*Fanout).queryShard", "chansend"},
		{"example.com/svc/notify.(*Dispatcher).deliver", "chanrecv"},
		{"example.com/svc/stream.(*Relay).forward", "select"},
	}
)

// libraryLeak is goroutines a library starts on the program's behalf: their stacks (leaf
// first, the wait's runtime frames included; each leaked unit starts one goroutine of each),
// the function whose go statement starts them (creator: what a goroutine profile read from
// the process's memory records, the runtime's own profiles do not), the program's call that
// made them (maker, its frame "function:line": what it allocated stays held by them), the
// program's other call into the library for each unit at another line of the same function
// (use, nil when none: what it allocates is held too, often more than the maker's own call,
// a query's connection kept idle in a pool the leak never closes), and what the library
// allocates for each on its own goroutines, held too (libHeld, no frame of the program).
type libraryLeak struct {
	stacks               [][]string
	creator              string
	maker, use, libHeld  []string
	makerShare, useShare float64 // of the heap each unit holds, the rest is the library's
}

// libraryLeakPool: an HTTP client's connections whose response bodies are never closed
// (net/http's two loops per connection, dialled on demand by the request's Do), a client
// library's subscription workers never stopped, and a *sql.DB opened per request and never
// closed (database/sql's connectionOpener, started by sql.Open; the query leaves the
// driver's connection idle in the leaked pool).
var libraryLeakPool = []libraryLeak{
	{
		stacks: [][]string{
			{"runtime.gopark", "runtime.selectgo", "net/http.(*persistConn).readLoop"},
			{"runtime.gopark", "runtime.selectgo", "net/http.(*persistConn).writeLoop"},
		},
		creator: "net/http.(*Transport).dialConn",
		maker: handler("net/http.(*persistConn).roundTrip", "net/http.(*Transport).roundTrip", "net/http.(*Transport).RoundTrip",
			"net/http.send", "net/http.(*Client).send", "net/http.(*Client).do", "net/http.(*Client).Do",
			"example.com/svc/pricing.(*Quotes).fetch:88", "example.com/svc/api.(*Server).handlePrice"),
		use: handler("net/url.(*URL).Parse", "net/url.Parse", "net/http.NewRequestWithContext", "net/http.NewRequest",
			"example.com/svc/pricing.(*Quotes).fetch:86", "example.com/svc/api.(*Server).handlePrice"),
		libHeld:    []string{"bufio.NewReaderSize", "net/http.(*Transport).dialConn", "net/http.(*Transport).dialConnFor"},
		makerShare: 0.2,
		useShare:   0.1,
	},
	{
		stacks: [][]string{
			{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv2", "github.com/acme/pubsub.(*Subscription).receive"},
		},
		creator: "github.com/acme/pubsub.newSubscription",
		maker: handler("github.com/acme/pubsub.newSubscription", "github.com/acme/pubsub.(*Client).Subscribe",
			"example.com/svc/events.(*Feed).watch:41", "example.com/svc/api.(*Server).handleEvents"),
		libHeld:    []string{"github.com/acme/pubsub.(*Subscription).buffer", "github.com/acme/pubsub.(*Subscription).receive"},
		makerShare: 0.5,
	},
	{
		stacks: [][]string{
			{"runtime.gopark", "runtime.selectgo", "database/sql.(*DB).connectionOpener"},
		},
		creator: "database/sql.OpenDB",
		maker: handler("database/sql.OpenDB", "database/sql.Open",
			"example.com/svc/ledger.(*Store).balance:57", "example.com/svc/api.(*Server).handleBalance"),
		use: handler("bufio.NewReaderSize", "github.com/acme/pgwire.(*conn).startup", "github.com/acme/pgwire.(*Driver).Open",
			"database/sql.dsnConnector.Connect", "database/sql.(*DB).conn", "database/sql.(*DB).query", "database/sql.(*DB).QueryContext",
			"database/sql.(*DB).QueryRowContext", "example.com/svc/ledger.(*Store).balance:61", "example.com/svc/api.(*Server).handleBalance"),
		libHeld:    []string{"time.NewTimer", "database/sql.(*DB).connectionOpener"},
		makerShare: 0.2,
		useShare:   0.6,
	},
}

// frameLine splits a frame "function:line" of a stack pool; line 0 when it has none.
func frameLine(fr string) (string, int64) {
	if i := strings.LastIndexByte(fr, ':'); i > 0 {
		if n, err := strconv.ParseInt(fr[i+1:], 10, 64); err == nil {
			return fr[:i], n
		}
	}
	return fr, 0
}

// culpritOf is the innermost frame of stack in the main module.
func culpritOf(stack []string) string {
	fn, _ := culpritLine(stack)
	return fn
}

// culpritLine is the innermost frame of stack in the main module, and its line when the stack
// says (0 when not).
func culpritLine(stack []string) (string, int64) {
	for _, f := range stack {
		if fn, line := frameLine(f); inMainModule(fn) {
			return fn, line
		}
	}
	return "", 0
}

func inMainModule(fn string) bool {
	return len(fn) > len(MainModule) && fn[:len(MainModule)] == MainModule && (fn[len(MainModule)] == '/' || fn[len(MainModule)] == '.')
}

type siteRole int

const (
	roleGarbage   siteRole = iota // request garbage: dead within the request
	roleSteady                    // built at start and kept
	roleLeak                      // kept for ever
	roleSpike                     // live while a spike lasts
	roleCache                     // kept until evicted
	roleGoroutine                 // kept by each leaked goroutine
)

// site is one allocation site of the heap profile, sampled as the runtime samples: each
// object is recorded with probability 1-exp(-size/MemProfileRate).
type site struct {
	role    siteRole
	stack   []string
	objSize float64
	share   float64 // of the background allocation, for garbage sites
	prob    float64
	carry   float64
	allocN  int64 // sampled objects allocated so far
	liveN   int64 // sampled objects live now
	// As of the last completed GC, which is what a heap profile shows.
	gcAllocN, gcLiveN int64
}

func newSite(role siteRole, stack []string, objSize float64) *site {
	return &site{role: role, stack: stack, objSize: objSize, prob: 1 - math.Exp(-objSize/profileRate)}
}

// alloc records an allocation of b bytes.
func (s *site) alloc(r *rand.Rand, b float64) {
	if b <= 0 {
		return
	}
	objs := b/s.objSize + s.carry
	n := math.Floor(objs)
	s.carry = objs - n
	k := binomial(r, n, s.prob)
	s.allocN += k
	if s.role != roleGarbage {
		s.liveN += k
	}
}

// siteSet is every allocation site of one service.
type siteSet struct {
	r       *rand.Rand
	all     []*site
	garbage []*site
	steady  *site
	leak    *site // nil unless the shape has one
	spike   *site
	cache   *site
	gor     *site
	// goroutine profile: the leaking group's function and wait
	leakFn, leakWait string
	workers          int
	// lib is a library's goroutines that leak (nil when the program's own do), libSite what
	// the library holds for them.
	lib     *libraryLeak
	libSite *site
	// libUse is what the program's other call into the library holds (nil when none).
	libUse *site
	// libCalls is the garbage of the program's calls into the library.
	libCalls *site
	// climb is the site whose allocation climbs (nil unless the shape has one).
	climb *site
	// leakParts are the sites of a leak spread over several (leak is then nil), each
	// keeping its share of it (Params.LeakSites).
	leakParts []*site
}

// newSiteSet draws the sites of a service of parameters p.
func newSiteSet(r *rand.Rand, p Params) *siteSet {
	s := &siteSet{r: r, workers: 4 + r.IntN(12)}
	order := r.Perm(len(garbagePool))[:3+r.IntN(3)]
	var weights []float64
	total := 0.0
	for i := range order {
		w := uniform(r, 0.2, 1)
		if i == 0 {
			w = uniform(r, 1.5, 3) // one site dominates
		}
		weights = append(weights, w)
		total += w
	}
	for i, j := range order {
		g := newSite(roleGarbage, garbagePool[j], logUniform(r, 48, 32<<10))
		g.share = weights[i] / total
		s.garbage = append(s.garbage, g)
	}
	if p.LeakBusy > 0 { // the leaking site allocates that share of the garbage, through its own stack
		s.leak = newSite(roleLeak, leakPool[r.IntN(len(leakPool))], logUniform(r, 256, 8<<10))
		g := newSite(roleGarbage, s.leak.stack, logUniform(r, 256, 8<<10))
		for _, o := range s.garbage {
			o.share *= 1 - p.LeakBusy
		}
		g.share = p.LeakBusy
		s.garbage = append(s.garbage, g)
	}
	if p.CostBase > 0 {
		s.climb = newSite(roleGarbage, climbStack, logUniform(r, 4<<10, 64<<10))
	}
	s.steady = newSite(roleSteady, steadyStack, 4<<10)
	s.all = append(append(s.all, s.garbage...), s.steady)
	if s.climb != nil {
		s.all = append(s.all, s.climb)
	}
	if p.LeakRate > 0 && len(p.LeakSites) > 0 {
		for i := range p.LeakSites {
			st := newSite(roleLeak, spreadPool[i%len(spreadPool)], logUniform(r, 256, 4<<10))
			s.leakParts = append(s.leakParts, st)
			s.all = append(s.all, st)
		}
	} else if p.LeakRate > 0 {
		switch {
		case s.leak != nil:
		case p.LeakLibrary:
			s.leak = newSite(roleLeak, libraryLeakStacks[r.IntN(len(libraryLeakStacks))], logUniform(r, 256, 8<<10))
		default:
			s.leak = newSite(roleLeak, leakPool[r.IntN(len(leakPool))], logUniform(r, 256, 64<<10))
		}
		s.all = append(s.all, s.leak)
	}
	if p.SpikeHeight > 0 {
		pool := spikePool
		switch {
		case p.RetentionMode != "":
			pool = batchPool
		case p.SpikeRise >= 1.5: // built over seconds, row by row
			pool = exportPool
		}
		s.spike = newSite(roleSpike, pool[r.IntN(len(pool))], 8*mib)
		if p.Observer {
			s.spike = newSite(roleSpike, observerStack, 1<<20)
		}
		s.all = append(s.all, s.spike)
	}
	if p.WarmSize > 0 {
		s.cache = newSite(roleCache, cachePool[r.IntN(len(cachePool))], logUniform(r, 16<<10, 64<<10))
		s.all = append(s.all, s.cache)
	}
	if p.GoroutineLeakRate > 0 && p.Library > 0 {
		s.lib = &libraryLeakPool[p.Library-1]
		s.gor = newSite(roleGoroutine, s.lib.maker, math.Max(64, s.lib.makerShare*p.PerGoroutineHeap))
		s.libSite = newSite(roleGoroutine, s.lib.libHeld, math.Max(64, (1-s.lib.makerShare-s.lib.useShare)*p.PerGoroutineHeap))
		s.libCalls = newSite(roleGarbage, s.lib.maker, p.CallBytes)
		s.all = append(s.all, s.gor, s.libSite, s.libCalls)
		if s.lib.use != nil {
			s.libUse = newSite(roleGoroutine, s.lib.use, math.Max(64, s.lib.useShare*p.PerGoroutineHeap))
			s.all = append(s.all, s.libUse)
		}
	} else if p.GoroutineLeakRate > 0 {
		g := goroutineLeakPool[r.IntN(len(goroutineLeakPool))]
		s.leakFn, s.leakWait = g.fn, g.wait
		s.gor = newSite(roleGoroutine, []string{g.fn}, math.Max(64, p.PerGoroutineHeap))
		s.all = append(s.all, s.gor)
	}
	return s
}

// allocate records one step's allocation by site: from the parts of the live heap before
// (cur) and after (next), the background garbage bg and the cache's churn.
func (s *siteSet) allocate(m *model, cur, next parts, bg, churn, dt float64) {
	r := s.r
	ramp := func(t float64) float64 { return m.p.BaseLive * math.Min(1, math.Max(0, t)/startRamp) }
	built := ramp(m.t) - ramp(m.t-dt) // the steady heap, built at start
	s.steady.alloc(r, built)
	noise := math.Max(0, next.base-cur.base-built) // in-flight data: request garbage
	for _, g := range s.garbage {
		g.alloc(r, (bg+noise)*g.share)
	}
	if s.leak != nil {
		s.leak.alloc(r, next.leak-cur.leak)
	}
	for i, st := range s.leakParts {
		st.alloc(r, m.p.LeakSites[i]*(next.leak-cur.leak))
	}
	if s.spike != nil {
		s.spike.alloc(r, next.spike-cur.spike)
	}
	if s.cache != nil {
		s.cache.alloc(r, next.warm-cur.warm+churn)
		if churn > 0 && next.warm > 0 {
			// As many bytes are evicted as the churn adds.
			s.cache.liveN -= binomial(r, float64(s.cache.liveN), math.Min(1, churn/next.warm))
		}
	}
	if s.libSite != nil {
		s.gor.alloc(r, s.lib.makerShare*(next.gor-cur.gor))
		s.libSite.alloc(r, (1-s.lib.makerShare-s.lib.useShare)*(next.gor-cur.gor))
		if s.libUse != nil {
			s.libUse.alloc(r, s.lib.useShare*(next.gor-cur.gor))
		}
		leaked := (next.gor - cur.gor) / m.p.PerGoroutineHeap
		s.libCalls.alloc(r, leaked*m.p.CallsPerLeak*m.p.CallBytes)
	} else if s.gor != nil {
		s.gor.alloc(r, next.gor-cur.gor)
	}
}

// climbed records what the climbing site allocated in a step.
func (s *siteSet) climbed(b float64) {
	if s.climb != nil {
		s.climb.alloc(s.r, b)
	}
}

// spikeFreed drops the spike's data.
func (s *siteSet) spikeFreed() {
	if s.spike != nil {
		s.spike.liveN = 0
	}
}

// gcSnapshot publishes the sites' figures at the end of a cycle, as the runtime does.
func (s *siteSet) gcSnapshot(m *model) {
	for _, st := range s.all {
		st.gcAllocN = st.allocN
		st.gcLiveN = st.liveN
		if st.role == roleGarbage { // the requests in flight
			st.gcLiveN = poisson(s.r, st.prob*st.share*m.p.AllocRate*inflightTime/st.objSize)
		}
	}
}

// binomial draws from Binomial(n, p), by the Poisson or normal approximation when n is large.
func binomial(r *rand.Rand, n, p float64) int64 {
	if n <= 0 || p <= 0 {
		return 0
	}
	if p >= 1 {
		return int64(n)
	}
	if n <= 64 {
		k := int64(0)
		for range int(n) {
			if r.Float64() < p {
				k++
			}
		}
		return k
	}
	mean := n * p
	if p < 0.05 {
		return min(poisson(r, mean), int64(n))
	}
	v := math.Round(mean + math.Sqrt(mean*(1-p))*r.NormFloat64())
	return int64(clamp(v, 0, n))
}

// poisson draws from Poisson(mean).
func poisson(r *rand.Rand, mean float64) int64 {
	if mean <= 0 {
		return 0
	}
	if mean > 40 {
		return int64(math.Max(0, math.Round(mean+math.Sqrt(mean)*r.NormFloat64())))
	}
	l, k, prod := math.Exp(-mean), int64(0), r.Float64()
	for prod > l {
		k++
		prod *= r.Float64()
	}
	return k
}
