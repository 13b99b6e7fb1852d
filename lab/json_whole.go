package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func jsonWhole() Scenario {
	return Scenario{
		Name: "json-whole",
		Story: "An accounts service answers steady API traffic from an in-memory table of 100,000 " +
			"accounts, and its import endpoint receives JSON documents of about 20 MB (an array of " +
			"account records), a few at a time every few seconds. The handler reads each body whole with " +
			"io.ReadAll and unmarshals it with json.Unmarshal into a []Record: the raw bytes, the " +
			"doubling buffers of ReadAll and the decoded records (strings, tags, the growing " +
			"slice) add up to about 100 MB per document, all garbage a moment later. The heap " +
			"spikes by hundreds of MiB on each burst while the live heap between bursts is about " +
			"20 MiB, and GC pauses and p99 latency spike with it. The fix is to stream: decode the " +
			"body with json.Decoder (Token to enter the array, then Decode one record at a " +
			"time) and process records as they come, so memory per request is one record.",
		Expect: Expect{
			Kinds: []string{kindTransientSpike},
			// Decoding whole documents is also where its bytes are allocated.
			Allowed:  []string{kindAllocationHotspot, kindGCOverhead},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*importService).handleImport",
			Absent:   []string{kindHeapLeak},
			Watch:    30 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runJSONWhole,
	}
}

func runJSONWhole(ctx context.Context, env Env) error {
	s := newImportService(accountsTableSize)
	doc := newAccountsDocument(20 << 20)
	return serve(ctx, env, service{
		name: "json-whole",
		routes: map[string]http.HandlerFunc{
			"POST /import":  s.handleImport,
			"GET /accounts": s.handleAccounts,
		},
		loads: []load{
			// A burst of three documents, one after the other, every 8
			// seconds (one at a time keeps the load to about one core).
			{workers: 1, every: 8 * time.Second, burst: 3, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodPost, path: "/import", contentType: "application/json",
					body: doc.reader(), length: doc.size()})
			}},
			// The steady API traffic.
			{workers: 2, every: time.Second / 200, send: func(ctx context.Context, c *client, _ int) error {
				page := c.requests.Load() % (accountsTableSize / accountsPage)
				return c.send(ctx, call{method: http.MethodGet, path: "/accounts?page=" + strconv.FormatInt(page, 10)})
			}},
		},
	})
}

const (
	accountsTableSize = 100000
	accountsPage      = 1000
)

type importRecord struct {
	ID      int64    `json:"id"`
	Account string   `json:"account"`
	Email   string   `json:"email"`
	Country string   `json:"country"`
	Plan    string   `json:"plan"`
	Tags    []string `json:"tags"`
	Balance float64  `json:"balance"`
	Active  bool     `json:"active"`
	Created string   `json:"created"`
	Notes   string   `json:"notes"`
}

// accountSummary is what the service keeps of an account.
type accountSummary struct {
	ID      int64   `json:"id"`
	Account string  `json:"account"`
	Email   string  `json:"email"`
	Plan    string  `json:"plan"`
	Balance float64 `json:"balance"`
	Active  bool    `json:"active"`
}

type importService struct {
	imported atomic.Int64

	mu       sync.RWMutex
	accounts []accountSummary // by ID modulo the table size
}

func newImportService(n int) *importService {
	s := &importService{accounts: make([]accountSummary, n)}
	for i := range s.accounts {
		s.accounts[i] = accountSummary{ID: int64(i), Account: fmt.Sprintf("acct-%07d", i),
			Email: fmt.Sprintf("user%d@example.com", i), Plan: "free", Active: true}
	}
	return s
}

// handleImport reads the document whole and unmarshals it whole.
func (s *importService) handleImport(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "reading import: "+err.Error(), http.StatusBadRequest)
		return
	}
	var records []importRecord
	if err := json.Unmarshal(data, &records); err != nil {
		http.Error(w, "decoding import: "+err.Error(), http.StatusBadRequest)
		return
	}
	active := s.upsert(records)
	s.imported.Add(int64(len(records)))
	var b [64]byte
	out := strconv.AppendInt(b[:0], int64(len(records)), 10)
	out = append(out, ' ')
	out = strconv.AppendInt(out, int64(active), 10)
	w.Header().Set("Content-Type", "text/plain")
	w.Write(out)
}

// upsert stores the summaries of records and counts the active ones.
func (s *importService) upsert(records []importRecord) (active int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range records {
		r := &records[i]
		s.accounts[r.ID%int64(len(s.accounts))] = accountSummary{ID: r.ID, Account: r.Account, Email: r.Email,
			Plan: r.Plan, Balance: r.Balance, Active: r.Active}
		if r.Active {
			active++
		}
	}
	return active
}

// handleAccounts answers a page of accounts.
func (s *importService) handleAccounts(w http.ResponseWriter, r *http.Request) {
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 0 || page >= len(s.accounts)/accountsPage {
		http.Error(w, "page out of range", http.StatusBadRequest)
		return
	}
	s.mu.RLock()
	out, err := json.Marshal(s.accounts[page*accountsPage : (page+1)*accountsPage])
	s.mu.RUnlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// accountsDocument is a JSON array of about n bytes of records, sent by
// repeating one block of records so that the client holds kilobytes, not
// the whole document.
type accountsDocument struct {
	head, body, tail []byte
	times            int
}

func newAccountsDocument(n int) *accountsDocument {
	countries := []string{"NL", "PT", "JP", "US", "KE", "DE"}
	plans := []string{"free", "pro", "team", "enterprise"}
	rec := func(b []byte, i int) []byte {
		return fmt.Appendf(b, `{"id":%d,"account":"acct-%07d","email":"user%d@example.com","country":%q,"plan":%q,`+
			`"tags":["beta","newsletter","region-%d"],"balance":%d.%02d,"active":%t,"created":"2023-%02d-%02dT10:%02d:00Z",`+
			`"notes":"imported from legacy system batch %d"}`,
			i, i, i, countries[i%len(countries)], plans[i%len(plans)], i%7, i*13%100000, i%100, i%3 != 0,
			1+i%12, 1+i%28, i%60, i%50)
	}
	d := &accountsDocument{head: rec([]byte{'['}, 0), tail: []byte{']'}}
	for i := 1; i <= 200; i++ {
		d.body = rec(append(d.body, ','), i)
	}
	d.times = max(1, (n-len(d.head)-len(d.tail))/len(d.body))
	return d
}

func (d *accountsDocument) size() int64 {
	return int64(len(d.head) + d.times*len(d.body) + len(d.tail))
}

func (d *accountsDocument) reader() io.Reader { return &docReader{doc: d} }

type docReader struct {
	doc    *accountsDocument
	piece  int // 0: head, 1..times: body, times+1: tail
	offset int
}

func (r *docReader) current() []byte {
	switch {
	case r.piece == 0:
		return r.doc.head
	case r.piece <= r.doc.times:
		return r.doc.body
	default:
		return r.doc.tail
	}
}

func (r *docReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.piece <= r.doc.times+1 {
		cur := r.current()
		c := copy(p[n:], cur[r.offset:])
		n += c
		r.offset += c
		if r.offset == len(cur) {
			r.piece++
			r.offset = 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
