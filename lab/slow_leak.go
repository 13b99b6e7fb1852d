package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func slowLeak() Scenario {
	return Scenario{
		Name: "slow-leak",
		Story: "A payments API rejects duplicate submissions with idempotency keys: for every " +
			"accepted payment it remembers the key with the response it sent (about 2.5 KiB), so " +
			"that a retry gets the same answer. The entries were meant to expire after a day, but " +
			"the expiry job was never wired up, so the store only grows: at 10 payments a second " +
			"that is about 1.5 MiB a minute, on a heap of about 30 MiB (a risk-rules table) that " +
			"churns several MB a second of request garbage. Over a minute the leak is a few " +
			"percent of the heap, well inside the sawtooth of the GC cycles; over a day it is 2 " +
			"GiB. The fix is to expire the entries (a TTL swept periodically, or a bounded LRU) and " +
			"to keep only the key and a hash of the response.",
		Expect: Expect{
			Kinds:   []string{kindHeapLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*idempotencyStore).remember",
			Absent:  []string{kindGoroutineLeak, kindTransientSpike, kindNonGoMemory},
			// 1.5 MiB/min on a 25 MiB heap that churns: a minute adds less than the GC's noise
			// (the diagnosis says so: no leak faster than about 4 MiB/min), two show it as a
			// suspicion; proof needs the 4 MiB a leak must add, measured between the medians of
			// the first and last readings: about three minutes of growth after start-up.
			Visible:  2 * time.Minute,
			Confirm:  3*time.Minute + 30*time.Second,
			Watch:    60 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runSlowLeak,
	}
}

const (
	paymentsPerSecond = 10
	paymentRecord     = 2500     // bytes remembered per payment
	riskTableBytes    = 24 << 20 // the steady live heap
	riskChunk         = 64 << 10
	quotesPerSecond   = 150 // risk checks, the request garbage
	idempotencyLabCap = 64 << 20
)

func runSlowLeak(ctx context.Context, env Env) error {
	p := &paymentsService{keys: &idempotencyStore{byKey: make(map[string][]byte)}, risk: newRiskTable(riskTableBytes)}
	var seq atomic.Int64
	payment := []byte(`{"amount_cents":1299,"currency":"EUR","card":"tok_visa_4242","merchant":"m-1138","note":"order 5521"}`)
	return serve(ctx, env, service{
		name: "slow-leak",
		routes: map[string]http.HandlerFunc{
			"POST /payments": p.handlePayment,
			"GET /risk/{id}": p.handleRisk,
		},
		loads: []load{
			{workers: 1, every: time.Second / paymentsPerSecond, send: func(ctx context.Context, c *client, _ int) error {
				h := http.Header{"Idempotency-Key": {"pay-" + strconv.FormatInt(seq.Add(1), 10)}}
				return c.send(ctx, call{method: http.MethodPost, path: "/payments", header: h,
					contentType: "application/json", body: bytes.NewReader(payment)})
			}},
			{workers: 2, every: time.Second / quotesPerSecond, send: func(ctx context.Context, c *client, _ int) error {
				id := strconv.FormatInt(c.requests.Load()%riskRules, 10)
				return c.send(ctx, call{method: http.MethodGet, path: "/risk/" + id})
			}},
		},
	})
}

type paymentsService struct {
	keys *idempotencyStore
	risk *riskTable
}

type paymentRequest struct {
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Card        string `json:"card"`
	Merchant    string `json:"merchant"`
	Note        string `json:"note"`
}

func (p *paymentsService) handlePayment(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		http.Error(w, "Idempotency-Key header required", http.StatusBadRequest)
		return
	}
	if prev, ok := p.keys.lookup(key); ok {
		w.Header().Set("Content-Type", "application/json")
		w.Write(prev)
		return
	}
	var req paymentRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10)).Decode(&req); err != nil {
		http.Error(w, "decoding payment: "+err.Error(), http.StatusBadRequest)
		return
	}
	resp := p.keys.remember(key, &req)
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
}

// idempotencyStore maps idempotency keys to the response sent. The bug: no
// entry ever expires.
type idempotencyStore struct {
	mu    sync.Mutex
	byKey map[string][]byte
	bytes int
}

func (s *idempotencyStore) lookup(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.byKey[key]
	return b, ok
}

// remember builds the payment's response and keeps it under its key for
// ever: this is where the heap leaks.
func (s *idempotencyStore) remember(key string, req *paymentRequest) []byte {
	resp := make([]byte, 0, paymentRecord)
	resp = fmt.Appendf(resp, `{"status":"accepted","key":%q,"amount_cents":%d,"currency":%q,"merchant":%q,"receipt":"`,
		key, req.AmountCents, req.Currency, req.Merchant)
	for len(resp) < paymentRecord-2 {
		resp = append(resp, "0123456789abcdef"[len(resp)%16])
	}
	resp = append(resp, '"', '}')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+cap(resp) <= idempotencyLabCap { // lab safety valve
		s.byKey[key] = resp
		s.bytes += cap(resp)
	}
	return resp
}

const riskRules = 4096

// riskTable is the steady part of the heap: rules loaded at start.
type riskTable struct {
	chunks [][]byte
}

func newRiskTable(n int) *riskTable {
	t := &riskTable{}
	for range n / riskChunk {
		c := make([]byte, riskChunk)
		for i := range c {
			c[i] = byte(i * 13)
		}
		t.chunks = append(t.chunks, c)
	}
	return t
}

type riskAnswer struct {
	Rule  int    `json:"rule"`
	Score int    `json:"score"`
	Shard int    `json:"shard"`
	Note  string `json:"note"`
}

// handleRisk scores a rule: ordinary per-request garbage (the JSON
// encoding, a copy of the rule's bytes).
func (p *paymentsService) handleRisk(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 || id >= riskRules {
		http.NotFound(w, r)
		return
	}
	chunk := p.risk.chunks[id%len(p.risk.chunks)]
	rule := bytes.Clone(chunk[id%4*16384 : id%4*16384+16384])
	score := 0
	for _, b := range rule {
		score += int(b)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(riskAnswer{Rule: id, Score: score % 100, Shard: id % len(p.risk.chunks), Note: fmt.Sprintf("rule %d checked", id)})
}
