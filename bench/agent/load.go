package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is one run of the load generator.
type loadResult struct {
	Requests int
	Errors   int
	Wall     time.Duration
	P50, P99 time.Duration
}

func (r loadResult) throughput() float64 { return float64(r.Requests) / r.Wall.Seconds() }

// bodies are pre-built order bodies (20 of them, 10 to 30 items each, about 1.5-4.5 KB), so the
// load generator spends its CPU on HTTP, not on building JSON.
func bodies() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var out [][]byte
	for i := range 20 {
		o := Order{
			ID:       fmt.Sprintf("order-%06d", i),
			Customer: Customer{ID: int64(i * 7919 % 5000), Name: fmt.Sprintf("Customer %d", i), Email: fmt.Sprintf("c%d@example.com", i), Country: "FR"},
			Meta:     map[string]string{"channel": "web", "campaign": "spring", "client": "bench"},
		}
		if i%3 == 0 {
			o.Coupon = "SPRING10"
		}
		for j := range 10 + rng.IntN(21) {
			o.Items = append(o.Items, Item{SKU: fmt.Sprintf("SKU-%05d", rng.IntN(100000)), Name: fmt.Sprintf("Item number %d of the catalogue", j), Quantity: 1 + rng.IntN(5), Price: float64(rng.IntN(10000)) / 100})
		}
		b, _ := json.Marshal(o)
		out = append(out, b)
	}
	return out
}

// load sends n requests from c workers to url and measures them.
func load(client *http.Client, url string, n, c int, orders [][]byte) loadResult {
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				body := orders[(i+w)%len(orders)]
				t := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				lat[i] = time.Since(t)
				if err != nil {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	slices.Sort(lat)
	return loadResult{Requests: n, Errors: int(errs.Load()), Wall: wall, P50: lat[n/2], P99: lat[n*99/100]}
}
