package facts

import (
	"fmt"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/proftest"
)

func TestReceiver(t *testing.T) {
	for fn, want := range map[string]string{
		"net/http.(*persistConn).readLoop":                 "net/http.(*persistConn).",
		"github.com/acme/pubsub.Subscription.receive":      "github.com/acme/pubsub.Subscription.",
		"github.com/acme/pubsub.newSubscription":           "",
		"github.com/acme/pubsub.(*Client).Subscribe.func1": "github.com/acme/pubsub.(*Client).",
		"net/http.(*Transport).dialConn":                   "net/http.(*Transport).",
		"example.com/svc/events.watch.func2":               "",
		"gopkg.in/yaml.v3.(*parser).parse":                 "gopkg.in/yaml.v3.(*parser).",
		"runtime.gopark":                                   "",
		"github.com/nats-io/nats%2ego.(*Conn).readLoop":    "github.com/nats-io/nats%2ego.(*Conn).",
		"github.com/nats-io/nats%2ego.Connect":             "",
		"database/sql.OpenDB.gowrap1":                      "",
		"example.com/svc/cache.List[...].Push":             "example.com/svc/cache.List[...].",
		"example.com/svc/cache.New[...]":                   "",
	} {
		if got := receiver(fn); got != want {
			t.Errorf("receiver(%q) = %q, want %q", fn, got, want)
		}
	}
}

// madeEvidence is a program whose goroutines grew in a library's code (goroutines: stack to
// count, first and last profile; creators as memread records them, nil as the runtime's
// profiles do) with two heap profiles 60 s apart whose allocations by stack (frames
// "function:line", leaf first) grew from old to new ({alloc_space, inuse_space}).
func madeEvidence(t *testing.T, first, last map[string]int64, creators map[string]string, old, new map[string][2]int64) *Made {
	t.Helper()
	ev := evidence.New("run", evidence.Target{MainModule: "example.com/svc"}, evidence.Options{})
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{t0, t0.Add(time.Minute)} {
		rows, gs := old, first
		if i == 1 {
			rows, gs = new, last
		}
		ev.AddProfile(evidence.Snapshot{Kind: "heap", T: at, Path: fmt.Sprintf("heap-%d", i)}, proftest.Heap(at, rows))
		ev.AddProfile(evidence.Snapshot{Kind: "goroutine", T: at, Path: fmt.Sprintf("goroutine-%d", i)}, proftest.Goroutine(at, gs, creators))
	}
	ev.Finish(evidence.Options{})
	return Of(ev).Goroutine.Made
}

// scaled multiplies every value of rows by k.
func scaled(rows map[string][2]int64, k int64) map[string][2]int64 {
	out := map[string][2]int64{}
	for s, v := range rows {
		out[s] = [2]int64{v[0] * k, v[1] * k}
	}
	return out
}

const (
	opener     = "runtime.gopark;runtime.selectgo;database/sql.(*DB).connectionOpener"
	sqlOpen    = "runtime.mallocgc;database/sql.OpenDB:841;database/sql.Open:881;example.com/svc/ledger.(*Ledger).lookup:85;example.com/svc/api.handle:30"
	sqlConnect = "runtime.mallocgc;database/sql.Open:879;example.com/svc/ledger.(*Ledger).lookup:85;example.com/svc/api.handle:30"
	// The program's own driver, which database/sql calls back: the call into the library is
	// still lookup's.
	sqlDriver = "runtime.mallocgc;example.com/svc/ledger.driver.OpenConnector:20;database/sql.Open:881;example.com/svc/ledger.(*Ledger).lookup:85;example.com/svc/api.handle:30"
	sqlQuery  = "runtime.mallocgc;example.com/driver.(*Driver).Open:40;database/sql.(*DB).conn:1400;database/sql.(*DB).query:1700;database/sql.(*DB).QueryContext:1680;database/sql.(*DB).QueryRowContext:1790;example.com/svc/ledger.(*Ledger).lookup:92;example.com/svc/api.handle:30"
	sqlRows   = "runtime.mallocgc;database/sql.(*DB).queryDC:1750;database/sql.(*DB).query:1700;database/sql.(*DB).QueryContext:1680;database/sql.(*DB).QueryRowContext:1790;example.com/svc/ledger.(*Ledger).lookup:92;example.com/svc/api.handle:30"
)

// sqlRowsPerCall is what each sql.Open-per-request call allocates, and holds: the DB and its
// connector under sql.Open (the driver's configuration parsed in the program's own driver),
// the driver's connection (with its 4 KiB buffer) under
// QueryRowContext, more than sql.Open's; the query's rows are garbage.
var sqlRowsPerCall = map[string][2]int64{sqlOpen: {600, 600}, sqlConnect: {100, 100}, sqlDriver: {2000, 2000}, sqlQuery: {4300, 4300}, sqlRows: {800, 0}}

// TestMadeAtTheConstructorsLine: goroutines database/sql started for a *sql.DB opened per
// request and never closed are named at the program's sql.Open, not at its QueryRowContext
// through which more was allocated and is held (the driver's connection, kept idle in the
// leaked pool): the program calls methods of the goroutines' own type, so it made the value
// first.
func TestMadeAtTheConstructorsLine(t *testing.T) {
	first, last := map[string]int64{opener: 10}, map[string]int64{opener: 610}
	for _, tc := range []struct {
		name     string
		creators map[string]string
		by       MadeBy
		held     int64 // through the maker's matching calls
	}{
		// Every call of database/sql's functions at that line.
		{"runtime's profiles", nil, MadeByConstructor, 600 * (600 + 100 + 2000)},
		// The calls that reached OpenDB.
		{"read from memory", map[string]string{opener: "database/sql.OpenDB"}, MadeByCreator, 600 * 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := madeEvidence(t, first, last, tc.creators, scaled(sqlRowsPerCall, 10), scaled(sqlRowsPerCall, 610))
			if m == nil || len(m.Makers) == 0 {
				t.Fatalf("no maker: %+v", m)
			}
			mk := m.Makers[0]
			if mk.Site.Function != "example.com/svc/ledger.(*Ledger).lookup" || mk.Site.Line != 85 || mk.Call != "database/sql.Open" || m.By != tc.by {
				t.Errorf("maker %s:%d calling %s (by %s), want lookup:85 calling database/sql.Open (by %s)", mk.Site.Function, mk.Site.Line, mk.Call, m.By, tc.by)
			}
			if mk.Held != tc.held {
				t.Errorf("held %d through the maker's sql.Open, want %d", mk.Held, tc.held)
			}
		})
	}
}

// TestMadeAtTheUse: net/http's connection loops, made on demand by a Client's Do, are named at
// the program's Do, not at the NewRequest before it (a plain function of the same package,
// whose request the leaked connection holds too): the program never calls the goroutines'
// own type (persistConn).
func TestMadeAtTheUse(t *testing.T) {
	const (
		readLoop = "runtime.gopark;runtime.selectgo;net/http.(*persistConn).readLoop"
		newReq   = "runtime.mallocgc;net/http.NewRequestWithContext:900;net/http.NewRequest:870;example.com/svc/stock.check:40"
		do       = "runtime.mallocgc;net/http.(*persistConn).roundTrip:2600;net/http.(*Transport).roundTrip:600;net/http.(*Client).do:700;net/http.(*Client).Do:590;example.com/svc/stock.check:41"
	)
	rows := map[string][2]int64{newReq: {900, 900}, do: {500, 500}}
	m := madeEvidence(t, map[string]int64{readLoop: 4}, map[string]int64{readLoop: 404}, nil, scaled(rows, 4), scaled(rows, 404))
	if m == nil || len(m.Makers) == 0 {
		t.Fatalf("no maker: %+v", m)
	}
	if mk := m.Makers[0]; mk.Site.Function != "example.com/svc/stock.check" || mk.Site.Line != 41 || m.By != MadeByUse {
		t.Errorf("maker %s:%d calling %s (by %s), want check:41 calling Client.Do (by use)", mk.Site.Function, mk.Site.Line, mk.Call, m.By)
	}
}

// TestMadeByAPlainCreator: a client whose constructor starts a goroutine of an internal type
// the program never calls (go-redis v8's connection pool reaper, started by
// pool.NewConnPool under redis.NewClient) is named at the program's use of the client
// (rdb.Get, which reaches the pool's code) when the profiles do not say who started the
// goroutines, and at the constructor when they do, even when the creator's own allocations
// were never sampled.
func TestMadeByAPlainCreator(t *testing.T) {
	const (
		reaper    = "runtime.gopark;runtime.selectgo;github.com/go-redis/redis/v8/internal/pool.(*ConnPool).reaper"
		newClient = "runtime.mallocgc;github.com/go-redis/redis/v8.newConnPool:30;github.com/go-redis/redis/v8.NewClient:600;example.com/svc/cart.load:20"
		get       = "runtime.mallocgc;github.com/go-redis/redis/v8/internal/pool.(*ConnPool).newConn:200;github.com/go-redis/redis/v8/internal/pool.(*ConnPool).Get:250;github.com/go-redis/redis/v8.(*baseClient).getConn:260;github.com/go-redis/redis/v8.cmdable.Get:780;example.com/svc/cart.load:21"
	)
	rows := map[string][2]int64{newClient: {1500, 1500}, get: {2000, 2000}}
	for _, tc := range []struct {
		creators map[string]string
		line     int64
		by       MadeBy
	}{
		{nil, 21, MadeByUse},
		{map[string]string{reaper: "github.com/go-redis/redis/v8/internal/pool.NewConnPool"}, 20, MadeByConstructor},
	} {
		m := madeEvidence(t, map[string]int64{reaper: 2}, map[string]int64{reaper: 302}, tc.creators, scaled(rows, 2), scaled(rows, 302))
		if m == nil || len(m.Makers) == 0 {
			t.Fatalf("no maker: %+v", m)
		}
		if mk := m.Makers[0]; mk.Site.Function != "example.com/svc/cart.load" || mk.Site.Line != tc.line || m.By != tc.by {
			t.Errorf("creators %v: maker %s:%d calling %s (by %s), want load:%d (by %s)", tc.creators, mk.Site.Function, mk.Site.Line, mk.Call, m.By, tc.line, tc.by)
		}
	}
}

// TestMadeThroughACallback: when the only sampled allocations of the constructor's call are
// made in the program's own code the library called back (a driver of the program's, called
// by sql.Open), the call into the library is still the program's frame above the library's.
func TestMadeThroughACallback(t *testing.T) {
	rows := map[string][2]int64{sqlDriver: {2000, 2000}, sqlQuery: {4300, 4300}}
	m := madeEvidence(t, map[string]int64{opener: 10}, map[string]int64{opener: 610}, nil, scaled(rows, 10), scaled(rows, 610))
	if m == nil || len(m.Makers) == 0 {
		t.Fatalf("no maker: %+v", m)
	}
	if mk := m.Makers[0]; mk.Site.Function != "example.com/svc/ledger.(*Ledger).lookup" || mk.Site.Line != 85 || mk.Call != "database/sql.Open" || m.By != MadeByConstructor {
		t.Errorf("maker %s:%d calling %s (by %s), want lookup:85 calling database/sql.Open (by constructor)", mk.Site.Function, mk.Site.Line, mk.Call, m.By)
	}
}

// TestNoStandardLibraryConstructor: a plain function of another standard library package whose
// stack reaches the goroutines' library (io.WriteString to a net/http ResponseWriter) is no
// constructor of theirs; net/http's connection loops, recorded as dialConn's (a method), with
// no call through their types sampled yet, are then sought among every call into net/http.
func TestNoStandardLibraryConstructor(t *testing.T) {
	const (
		readLoop = "runtime.gopark;runtime.selectgo;net/http.(*persistConn).readLoop"
		write    = "runtime.mallocgc;net/http.(*response).Write;io.WriteString:330;example.com/svc/api.order:78;net/http.HandlerFunc.ServeHTTP"
		get      = "runtime.mallocgc;net/url.Parse;net/http.NewRequestWithContext;net/http.(*Client).Get:470;example.com/svc/stock.check:84"
	)
	rows := map[string][2]int64{write: {500, 0}, get: {500, 0}}
	m := madeEvidence(t, map[string]int64{readLoop: 4}, map[string]int64{readLoop: 404},
		map[string]string{readLoop: "net/http.(*Transport).dialConn"}, scaled(rows, 4), scaled(rows, 404))
	if m == nil || m.By != MadeByPackage || len(m.Makers) != 2 {
		t.Fatalf("made %+v, want both calls into net/http, by package", m)
	}
}
