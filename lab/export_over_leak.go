package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func exportOverLeak() Scenario {
	return Scenario{
		Name: "export-over-leak",
		Story: "An order service keeps every order it takes in an in-memory ledger, for a " +
			"reconciliation job that was later moved to the database: nothing reads the ledger any " +
			"more and nothing trims it, so it grows by about 0.5 MiB a second. Every 15 seconds a " +
			"partner pulls the product catalog as CSV, which the handler renders whole into a " +
			"bytes.Buffer, row by row, before writing it out: about 150 MB, the buffer doubling as " +
			"it grows. The GC runs several times during each export, so most of its readings of the " +
			"live heap fall inside an export or right after one, and a heap profile taken then " +
			"shows the export's buffer as if it were the heap's growth. Both need a fix: drop the " +
			"ledger (or bound it), and stream the CSV to the response (a bufio.Writer over it).",
		Expect: Expect{
			Kinds:    []string{kindHeapLeak, kindTransientSpike},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*orderLedger).record",
			Culprits: map[string]string{kindTransientSpike: "github.com/memdoctor/memdoctor/lab.(*catalogExport).render"},
			Absent:   []string{kindGoroutineLeak, kindNonGoMemory},
			// 0.5 MiB/s under 150 MB exports: the GC runs only inside the exports, twice in
			// each, so its readings of the live heap all hold an export's buffer; by 45 s they
			// have seen three exports (the lows rose under 15 MiB, a tenth of what they read)
			// and four heap profiles: too few to show the leak. A minute shows it, two confirm
			// it.
			Visible:  time.Minute,
			Confirm:  2 * time.Minute,
			Watch:    45 * time.Second,
			Interval: 5 * time.Second,
		},
		Run: runExportOverLeak,
	}
}

const (
	ledgerOrders    = 100      // per second
	ledgerRecord    = 5 << 10  // bytes kept per order: 0.5 MiB/s
	ledgerLabCap    = 96 << 20 // lab safety valve: past it no order is kept
	catalogLookups  = 150      // per second, the request garbage
	catalogPage     = 48 << 10 // bytes rendered per lookup
	catalogRows     = 1_500_000
	catalogEvery    = 15 * time.Second
	catalogRowBytes = 100 // about: 150 MB in all
)

func runExportOverLeak(ctx context.Context, env Env) error {
	l := &orderLedger{}
	x := &catalogExport{rows: catalogRows}
	return serve(ctx, env, service{
		name: "export-over-leak",
		routes: map[string]http.HandlerFunc{
			"POST /orders":        l.handleOrder,
			"GET /products/{sku}": x.handleProduct,
			"GET /catalog.csv":    x.handleExport,
		},
		loads: []load{
			{workers: 1, every: time.Second / ledgerOrders, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodPost, path: "/orders"})
			}},
			{workers: 2, every: time.Second / catalogLookups, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodGet, path: "/products/" + strconv.FormatInt(c.requests.Load()%catalogRows, 10)})
			}},
			{workers: 1, every: catalogEvery, send: func(ctx context.Context, c *client, _ int) error {
				return c.send(ctx, call{method: http.MethodGet, path: "/catalog.csv"})
			}},
		},
	})
}

// orderLedger keeps every order. The bug: nothing reads or trims it any more.
type orderLedger struct {
	mu     sync.Mutex
	orders [][]byte
	bytes  int
	seq    int64
}

func (l *orderLedger) handleOrder(w http.ResponseWriter, r *http.Request) {
	id := l.record()
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.FormatInt(id, 10))
}

// record keeps the order in the ledger for ever: this is where the heap leaks.
func (l *orderLedger) record() int64 {
	rec := make([]byte, ledgerRecord)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	n := copy(rec, fmt.Sprintf("order %d at %s: ", l.seq, time.Now().Format(time.RFC3339Nano)))
	for i := n; i < len(rec); i++ { // the order's lines: resident, as real orders are
		rec[i] = byte('a' + i%26)
	}
	if l.bytes+len(rec) <= ledgerLabCap {
		l.orders = append(l.orders, rec)
		l.bytes += len(rec)
	}
	return l.seq
}

// catalogExport serves the product catalog.
type catalogExport struct {
	rows int
}

// handleProduct renders one product page: ordinary per-request garbage.
func (x *catalogExport) handleProduct(w http.ResponseWriter, r *http.Request) {
	sku, err := strconv.Atoi(r.PathValue("sku"))
	if err != nil || sku < 0 || sku >= x.rows {
		http.NotFound(w, r)
		return
	}
	page := make([]byte, 0, catalogPage)
	page = fmt.Appendf(page, `{"sku":%d,"name":"product %d","variants":[`, sku, sku)
	for len(page) < catalogPage-64 {
		page = append(page, `{"size":"M","color":"blue","stock":12},`...)
	}
	page = append(page, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(page[:64])
}

// handleExport writes the whole catalog as CSV, rendered first.
func (x *catalogExport) handleExport(w http.ResponseWriter, r *http.Request) {
	csv := x.render()
	w.Header().Set("Content-Type", "text/csv")
	w.Header().Set("Content-Length", strconv.Itoa(csv.Len()))
	csv.WriteTo(w)
}

// render renders every row into one buffer, which doubles as it grows: the spike.
func (x *catalogExport) render() *bytes.Buffer {
	var b bytes.Buffer
	b.WriteString("sku,name,price_cents,stock,warehouse,updated\n")
	row := make([]byte, 0, 2*catalogRowBytes)
	for i := range x.rows {
		row = row[:0]
		row = strconv.AppendInt(row, int64(i), 10)
		row = append(row, ",product "...)
		row = strconv.AppendInt(row, int64(i), 10)
		row = append(row, ",1299,12,eu-west-1b,2024-05-01T10:00:00Z,"...)
		for len(row) < catalogRowBytes-1 {
			row = append(row, 'x')
		}
		row = append(row, '\n')
		b.Write(row)
	}
	return &b
}
