package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

const (
	uploadBytes  = 128 << 20
	uploadPeriod = 10 * time.Second
)

// caddyEnv keeps Caddy's autosave, certificates and locks inside the work directory.
func caddyEnv(work string) []string {
	return []string{"HOME=" + work, "XDG_CONFIG_HOME=" + filepath.Join(work, "config"), "XDG_DATA_HOME=" + filepath.Join(work, "data")}
}

// writeJSONFile writes v as JSON to path.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// localServer serves h on a free loopback port until close is called.
func localServer(h http.Handler) (port int, close func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	// No timeouts: the config server must keep the connections Caddy abandons open, as a real
	// config endpoint would.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	go srv.Serve(l)
	return l.Addr().(*net.TCPAddr).Port, func() { srv.Close() }, nil
}

// setupCaddyChunked proxies a loopback listener to a backend that discards request bodies.
func setupCaddyChunked(work string) (*launch, error) {
	var received atomic.Int64
	backend, closeBackend, err := localServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		received.Add(n)
	}))
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		closeBackend()
		return nil, err
	}
	admin, web := ports[0], ports[1]
	cfg := map[string]any{
		"admin":   map[string]any{"listen": fmt.Sprintf("127.0.0.1:%d", admin)},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{"http": map[string]any{"servers": map[string]any{"proxy": map[string]any{
			"listen":          []string{fmt.Sprintf("127.0.0.1:%d", web)},
			"automatic_https": map[string]any{"disable": true},
			"routes": []any{map[string]any{"handle": []any{map[string]any{
				"handler":   "reverse_proxy",
				"upstreams": []any{map[string]any{"dial": fmt.Sprintf("127.0.0.1:%d", backend)}},
			}}}},
		}}}},
	}
	path := filepath.Join(work, "caddy.json")
	if err := writeJSONFile(path, cfg); err != nil {
		closeBackend()
		return nil, err
	}
	url := localURL(web, "/upload")
	return &launch{
		args:  []string{"run", "--config", path},
		env:   caddyEnv(work),
		pprof: localURL(admin, "/debug/pprof/"),
		load: func(ctx context.Context) string {
			n, err := chunkedUploads(ctx, url, uploadBytes, uploadPeriod)
			s := fmt.Sprintf("%d chunked uploads of %d MiB, %d MiB reached the backend", n, uploadBytes>>20, received.Load()>>20)
			if err != nil {
				s += fmt.Sprintf(" (last error: %v)", err)
			}
			return s
		},
		close: closeBackend,
	}, nil
}

// chunkedUploads POSTs a body of size bytes with no Content-Length (so chunked) to url every
// period, starting at once, and returns how many uploads completed.
func chunkedUploads(ctx context.Context, url string, size int64, period time.Duration) (int, error) {
	client := &http.Client{Timeout: 2 * time.Minute}
	var done int
	var lastErr error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, io.NopCloser(&zeroReader{left: size}))
		if err != nil {
			return done, err
		}
		req.ContentLength = -1 // unknown: Transfer-Encoding: chunked
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				done++
			} else {
				lastErr = fmt.Errorf("status %s", resp.Status)
			}
		} else if ctx.Err() == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return done, lastErr
		case <-time.After(period):
		}
	}
}

// zeroReader yields left bytes of a repeating pattern, then EOF.
type zeroReader struct{ left int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > z.left {
		p = p[:z.left]
	}
	for i := range p {
		p[i] = byte('a' + i%26)
	}
	z.left -= int64(len(p))
	return len(p), nil
}

// setupCaddyHTTPLoader makes Caddy poll a local config server every second (admin.config.load
// with load_delay); the server always answers with the same config, which keeps the polling
// going ("config unchanged").
func setupCaddyHTTPLoader(work string) (*launch, error) {
	admin, err := freePort()
	if err != nil {
		return nil, err
	}
	var requests atomic.Int64
	var cfgJSON atomic.Value
	port, closeServer, err := localServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(cfgJSON.Load().([]byte))
	}))
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"admin": map[string]any{
			"listen": fmt.Sprintf("127.0.0.1:%d", admin),
			"config": map[string]any{
				"load":       map[string]any{"module": "http", "url": localURL(port, "/config")},
				"load_delay": "1s",
			},
		},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		closeServer()
		return nil, err
	}
	cfgJSON.Store(b)
	path := filepath.Join(work, "caddy.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		closeServer()
		return nil, err
	}
	return &launch{
		args:  []string{"run", "--config", path},
		env:   caddyEnv(work),
		pprof: localURL(admin, "/debug/pprof/"),
		load: func(ctx context.Context) string {
			n0, t0 := requests.Load(), time.Now()
			<-ctx.Done()
			n := requests.Load() - n0
			return fmt.Sprintf("%d config requests served, %.1f/s (one poll a second is 1/s)", n, float64(n)/time.Since(t0).Seconds())
		},
		close: closeServer,
	}, nil
}
