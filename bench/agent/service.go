package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/grafana/pyroscope-go"
	"mosn.io/holmes"
	mlog "mosn.io/pkg/log"

	"github.com/memdoctor/memdoctor/agent"
)

// Order is what a client posts.
type Order struct {
	ID       string            `json:"id"`
	Customer Customer          `json:"customer"`
	Items    []Item            `json:"items"`
	Coupon   string            `json:"coupon,omitempty"`
	Meta     map[string]string `json:"meta"`
}

type Customer struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Country string `json:"country"`
}

type Item struct {
	SKU      string  `json:"sku"`
	Name     string  `json:"name"`
	Quantity int     `json:"quantity"`
	Price    float64 `json:"price"`
}

// Invoice is what the service answers.
type Invoice struct {
	OrderID  string        `json:"order_id"`
	Customer string        `json:"customer"`
	Lines    []InvoiceLine `json:"lines"`
	Subtotal float64       `json:"subtotal"`
	Discount float64       `json:"discount"`
	Tax      float64       `json:"tax"`
	Total    float64       `json:"total"`
	Issued   time.Time     `json:"issued"`
	Notes    []string      `json:"notes"`
}

type InvoiceLine struct {
	SKU   string  `json:"sku"`
	Name  string  `json:"name"`
	Qty   int     `json:"qty"`
	Unit  float64 `json:"unit"`
	Total float64 `json:"total"`
	Tax   float64 `json:"tax"`
}

// recent keeps the last invoices of 1000 accounts, 4 each: the service's live heap (about
// 10 MB once full). Requests are spread over the accounts in turn.
type recent struct {
	mu sync.Mutex
	n  int64
	m  map[int64][]*Invoice
}

const (
	accounts        = 1000
	keepPerCustomer = 4
)

func (r *recent) add(inv *Invoice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	key := r.n % accounts
	l := append(r.m[key], inv)
	if len(l) > keepPerCustomer {
		l = l[len(l)-keepPerCustomer:]
	}
	r.m[key] = l
}

func handler(store *recent) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var o Order
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		inv := &Invoice{OrderID: o.ID, Customer: o.Customer.Name, Issued: time.Now()}
		for _, it := range o.Items {
			line := InvoiceLine{SKU: it.SKU, Name: it.Name, Qty: it.Quantity, Unit: it.Price}
			line.Total = float64(it.Quantity) * it.Price
			line.Tax = line.Total * 0.2
			inv.Lines = append(inv.Lines, line)
			inv.Subtotal += line.Total
			inv.Tax += line.Tax
		}
		if o.Coupon != "" {
			inv.Discount = inv.Subtotal * 0.1
			inv.Notes = append(inv.Notes, fmt.Sprintf("coupon %s applied", o.Coupon))
		}
		inv.Total = inv.Subtotal - inv.Discount + inv.Tax
		inv.Notes = append(inv.Notes, fmt.Sprintf("%d lines for %s (%s)", len(inv.Lines), o.Customer.Email, o.Customer.Country))
		store.add(inv)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(inv)
	}
}

// serve runs the service with one configuration until SIGTERM, then prints its own CPU time
// and peak RSS as one JSON line.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config := fs.String("config", "none", "none, memdoctor, pyroscope or holmes (or memdoctor-1m-history, memdoctor-no-profiles)")
	sink := fs.String("sink", "", "pyroscope: the URL of the sink that discards profiles")
	dumps := fs.String("dumps", os.TempDir(), "holmes: where it dumps")

	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	mux := http.NewServeMux()
	store := &recent{m: make(map[int64][]*Invoice)}
	mux.Handle("POST /order", handler(store))

	switch *config {
	case "none":
	case "memdoctor", "memdoctor-1m-history", "memdoctor-no-profiles":
		// The defaults; the two variants split the agent's cost between its sample ring (an
		// hour by default) and its periodic profiles.
		var opts []agent.Option
		switch *config {
		case "memdoctor-1m-history":
			opts = append(opts, agent.WithHistory(time.Minute))
		case "memdoctor-no-profiles":
			opts = append(opts, agent.WithProfileInterval(time.Hour))
		}
		a, err := agent.Start(ctx, opts...)
		if err != nil {
			return err
		}
		defer a.Stop(context.Background())
		mux.Handle(agent.Prefix, a.Handler())
	case "pyroscope":
		p, err := pyroscope.Start(pyroscope.Config{
			ApplicationName: "bench-agent",
			ServerAddress:   *sink,
			ProfileTypes: []pyroscope.ProfileType{
				pyroscope.ProfileInuseObjects, pyroscope.ProfileInuseSpace,
				pyroscope.ProfileAllocObjects, pyroscope.ProfileAllocSpace,
				pyroscope.ProfileGoroutines,
			},
		})
		if err != nil {
			return err
		}
		defer p.Stop()
	case "holmes":
		h, err := holmes.New(
			holmes.WithDumpPath(*dumps),
			holmes.WithLogger(holmes.NewFileLog(*dumps+"/holmes.log", mlog.ERROR)),
			holmes.WithMemDump(10, 25, 80, time.Minute),
			holmes.WithGoroutineDump(10, 25, 2000, 100*1000, time.Minute),
			holmes.WithGCHeapDump(10, 20, 40, time.Minute),
		)
		if err != nil {
			return err
		}
		h.EnableMemDump().EnableGoroutineDump().EnableGCHeapDump().Start()
		defer h.Stop()
	default:
		return fmt.Errorf("unknown -config %q", *config)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Printf("listening on %s\n", ln.Addr())
	<-ctx.Done()
	srv.Close()
	st, err := selfStats()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(st)
}
