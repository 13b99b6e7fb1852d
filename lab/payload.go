package lab

import (
	"fmt"
	"math/rand/v2"
)

// This file builds the deterministic payloads the loads send.

// httpTrafficText returns about n bytes of HTTP/1.1 requests and responses,
// the kind of text a traffic agent reassembles.
func httpTrafficText(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{"/api/v1/orders", "/api/v1/users/42", "/healthz", "/api/v2/search?q=shoes", "/static/app.js"}
	buf := make([]byte, 0, n+1024)
	for len(buf) < n {
		body := fmt.Sprintf(`{"id":%d,"status":"ok","items":[%d,%d,%d]}`, rng.IntN(1e6), rng.IntN(100), rng.IntN(100), rng.IntN(100))
		buf = fmt.Appendf(buf, "GET %s HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: agent/1.%d\r\nAccept: */*\r\n\r\n",
			paths[rng.IntN(len(paths))], rng.IntN(10))
		buf = fmt.Appendf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			len(body), body)
	}
	return buf
}

// logLines returns about n bytes of JSON log lines.
func logLines(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	levels := []string{"debug", "info", "info", "info", "warn", "error"}
	services := []string{"checkout", "payments", "search", "auth", "inventory"}
	msgs := []string{"request served", "cache miss", "upstream timeout", "retrying", "user logged in", "order created"}
	buf := make([]byte, 0, n+512)
	for i := 0; len(buf) < n; i++ {
		buf = fmt.Appendf(buf, `{"ts":"2024-05-%02dT%02d:%02d:%02d.%03dZ","level":"%s","service":"%s","msg":"%s","latency_ms":%d,"trace_id":"%016x","status":%d}`+"\n",
			1+i%28, i%24, i%60, (i*7)%60, i%1000, levels[rng.IntN(len(levels))], services[rng.IntN(len(services))],
			msgs[rng.IntN(len(msgs))], rng.IntN(2000), rng.Uint64(), 200+100*rng.IntN(4))
	}
	return buf
}
