package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// perHostRate is how many requests a second the per-host load sends, each with a Host header
// never sent before.
const perHostRate = 300

// setupCaddyPerHost serves one static response on a loopback port with Caddy's per-host HTTP
// metrics on (the http app's metrics.per_host), its admin API (and pprof) on another.
func setupCaddyPerHost(work string) (*launch, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	admin, web := ports[0], ports[1]
	cfg := map[string]any{
		"admin":   map[string]any{"listen": fmt.Sprintf("127.0.0.1:%d", admin)},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{"http": map[string]any{
			"metrics": map[string]any{"per_host": true},
			"servers": map[string]any{"web": map[string]any{
				"listen":          []string{fmt.Sprintf("127.0.0.1:%d", web)},
				"automatic_https": map[string]any{"disable": true},
				"routes": []any{map[string]any{"handle": []any{map[string]any{
					"handler": "static_response", "body": "ok",
				}}}},
			}},
		}},
	}
	path := filepath.Join(work, "caddy.json")
	if err := writeJSONFile(path, cfg); err != nil {
		return nil, err
	}
	url := localURL(web, "/")
	return &launch{
		args:  []string{"run", "--config", path},
		env:   caddyEnv(work),
		pprof: localURL(admin, "/debug/pprof/"),
		load: func(ctx context.Context) string {
			n, err := newHosts(ctx, url, perHostRate)
			s := fmt.Sprintf("%d requests, each with a new Host header", n)
			if err != nil {
				s += fmt.Sprintf(" (last error: %v)", err)
			}
			return s
		},
	}, nil
}

// newHosts GETs url perSec times a second, each request with a Host header never sent before
// (h1.example.test, h2...), over a few kept-alive connections, until ctx is done.
func newHosts(ctx context.Context, url string, perSec int) (int64, error) {
	const workers = 4
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var sent atomic.Int64
	var lastErr atomic.Value
	tick := time.NewTicker(time.Second / time.Duration(perSec))
	defer tick.Stop()
	work := make(chan int64)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					lastErr.Store(err)
					continue
				}
				req.Host = fmt.Sprintf("h%d.example.test", i)
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						lastErr.Store(err)
					}
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				sent.Add(1)
			}
		}()
	}
	for i := int64(1); ; i++ {
		select {
		case <-ctx.Done():
			close(work)
			wg.Wait()
			err, _ := lastErr.Load().(error)
			return sent.Load(), err
		case <-tick.C:
			select {
			case work <- i:
			default: // every worker busy: this tick is skipped
			}
		}
	}
}
