package lab

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func sessionSprawl() Scenario {
	return Scenario{
		Name: "session-sprawl",
		Story: "A web shop's API runs behind a session middleware that opens a session for every " +
			"request without a session cookie and keeps it in memory until it expires, a day later. " +
			"The API's clients never get the cookie (the JSON responses do not set it), so every " +
			"request opens a new session that nobody will use again, and the session keeps a little " +
			"of everything the request touched: its parsed headers, its query, the cart the handler " +
			"rendered into it, its attributes, an entry in the registry that indexes sessions by " +
			"client, and a line of audit. No single site keeps much (the largest about a third of " +
			"the growth), but together they keep about 2.5 MiB a second, all under the middleware. " +
			"The fix is in the middleware: open a session only when a request needs one (or set the " +
			"cookie so the next request finds it), and bound the store.",
		Expect: Expect{
			Kinds:   []string{kindHeapLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*sessionMiddleware).ServeHTTP",
			Absent:  []string{kindGoroutineLeak, kindTransientSpike, kindNonGoMemory},
			// The culprit is the function the growing sites share: each site alone keeps
			// under a third of the growth.
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runSessionSprawl,
	}
}

const (
	sprawlRequests = 400 // per second
	// What each request leaves behind, site by site (about 7 KiB in all).
	sprawlCartBytes   = 2048 // the handler's rendered cart
	sprawlAttrBytes   = 1024 // the store's session attributes
	sprawlIndexBytes  = 640  // the registry's entry
	sprawlAuditBytes  = 512  // the audit line
	sprawlHeaderBytes = 1200 // of request headers the client sends (net/http parses them)
	sprawlPageBytes   = 32 << 10
	sprawlLabCap      = 480 << 20 // lab safety valve: past it no session is kept
)

func runSessionSprawl(ctx context.Context, env Env) error {
	shop := &storefront{}
	mw := &sessionMiddleware{store: &sessionStore{byID: make(map[string]*webSession)},
		registry: &sessionRegistry{byClient: make(map[string][]*sessionEntry)}, next: shop.handleCart}
	hdr := http.Header{
		"User-Agent":      {"shop-app/4.12.1 (Android 14; Pixel 8; build 2024.11.3-release)"},
		"Accept-Language": {"en-GB,en;q=0.9,de;q=0.8,fr;q=0.7"},
		"X-Device-Hints":  {string(hintsValue(sprawlHeaderBytes))},
	}
	return serve(ctx, env, service{
		name:   "session-sprawl",
		routes: map[string]http.HandlerFunc{"GET /api/cart/{user}": mw.ServeHTTP},
		loads: []load{{workers: 2, every: time.Second / sprawlRequests, send: func(ctx context.Context, c *client, _ int) error {
			n := c.requests.Load()
			return c.send(ctx, call{method: http.MethodGet, header: hdr,
				path: "/api/cart/u" + strconv.FormatInt(n%5000, 10) + "?currency=EUR&promo=WINTER&ref=app-" + strconv.FormatInt(n, 10)})
		}}},
	})
}

// hintsValue is a header value of n printable bytes.
func hintsValue(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i%36]
	}
	return b
}

// sessionMiddleware is the session library's middleware. The bug: it opens
// a session for every request that comes without its cookie, and the API's
// clients never get one.
type sessionMiddleware struct {
	store    *sessionStore
	registry *sessionRegistry
	audit    auditTrail
	next     http.HandlerFunc
}

type sessionKey struct{}

// ServeHTTP opens the request's session, indexes it, serves the request with
// it and audits it: every site that keeps a little of each request is under
// this call.
func (m *sessionMiddleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := m.store.open(r)
	s.query = r.URL.Query() // parsed again, kept for the session's "last page"
	m.registry.index(s, r.PathValue("user"))
	m.next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	m.audit.record(s, r)
}

// webSession is one session: what the store keeps until it expires.
type webSession struct {
	id     string
	opened time.Time
	header http.Header // as net/http parsed it
	query  url.Values
	attrs  map[string][]byte
}

// sessionStore keeps sessions until they expire (never, within the lab's run).
type sessionStore struct {
	mu    sync.Mutex
	byID  map[string]*webSession
	seq   atomic.Int64
	bytes atomic.Int64
}

// open opens a new session for a request without a session cookie: the
// store keeps it, with the request's headers, for a day.
func (st *sessionStore) open(r *http.Request) *webSession {
	s := &webSession{id: "s" + strconv.FormatInt(st.seq.Add(1), 36), opened: time.Now(), header: r.Header,
		attrs: map[string][]byte{"csrf": make([]byte, sprawlAttrBytes/2), "prefs": make([]byte, sprawlAttrBytes/2)}}
	if st.bytes.Add(7<<10) > sprawlLabCap {
		return s // lab cap reached: serve without keeping it
	}
	st.mu.Lock()
	st.byID[s.id] = s
	st.mu.Unlock()
	return s
}

// sessionRegistry indexes sessions by client, for the "sign out everywhere"
// feature.
type sessionRegistry struct {
	mu       sync.Mutex
	byClient map[string][]*sessionEntry
}

type sessionEntry struct {
	session *webSession
	client  string
	detail  []byte
}

func (g *sessionRegistry) index(s *webSession, client string) {
	e := &sessionEntry{session: s, client: client, detail: make([]byte, sprawlIndexBytes)}
	copy(e.detail, s.id)
	g.mu.Lock()
	g.byClient[client] = append(g.byClient[client], e)
	g.mu.Unlock()
}

// auditTrail keeps a line per request in its session.
type auditTrail struct{}

func (auditTrail) record(s *webSession, r *http.Request) {
	line := make([]byte, 0, sprawlAuditBytes)
	line = fmt.Appendf(line, "%s %s %s %s", s.opened.Format(time.RFC3339Nano), r.Method, r.URL.Path, s.id)
	s.attrs["audit"] = line
}

// storefront is the shop's API.
type storefront struct{}

// handleCart renders the user's cart into the session (for the next page)
// and answers with the page.
func (shop *storefront) handleCart(w http.ResponseWriter, r *http.Request) {
	s := r.Context().Value(sessionKey{}).(*webSession)
	cart := make([]byte, 0, sprawlCartBytes)
	cart = fmt.Appendf(cart, `{"user":%q,"items":[`, r.PathValue("user"))
	for len(cart) < sprawlCartBytes-32 {
		cart = append(cart, `{"sku":"A-1","qty":1},`...)
	}
	cart = append(cart, "]}"...)
	s.attrs["cart"] = cart
	page := make([]byte, sprawlPageBytes) // the response: garbage once written
	copy(page, cart)
	w.Header().Set("Content-Type", "application/json")
	w.Write(page[:len(cart)])
}
