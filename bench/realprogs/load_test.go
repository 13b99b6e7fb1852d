package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestAXFRQuery(t *testing.T) {
	q, err := axfrQuery(0x1234, "example.org.")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 29, // length of what follows
		0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, // header: id, flags, one question
		7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0, // example.org.
		0, 252, 0, 1, // AXFR IN
	}
	if !bytes.Equal(q, want) {
		t.Errorf("axfrQuery = %v\nwant        %v", q, want)
	}
	for _, bad := range []string{"", "a..b.", strings.Repeat("x", 64) + ".org."} {
		if _, err := axfrQuery(1, bad); err == nil {
			t.Errorf("axfrQuery(%q) took a bad zone", bad)
		}
	}
}

func TestWriteZone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := writeZone(path, 300); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "@ IN SOA ns1.example.org. ") || !strings.Contains(s, "h299 IN A 10.0.1.43\n") {
		t.Errorf("zone lacks its SOA or last record:\n%s", s[:200])
	}
	if n := strings.Count(s, " IN A 10."); n != 300 {
		t.Errorf("%d generated A records, want 300", n)
	}
}

// TestAbortedTransfer checks that the client sends the query, waits for the first answer
// bytes and resets the connection (a reset, not an orderly close: the server's read fails).
func TestAbortedTransfer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	readErr := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			readErr <- err
			return
		}
		defer c.Close()
		q := make([]byte, 31)
		io.ReadFull(c, q)
		got <- q
		c.Write(binary.BigEndian.AppendUint16(nil, 100))
		c.SetReadDeadline(time.Now().Add(time.Minute))
		_, err = c.Read(make([]byte, 1))
		readErr <- err
	}()
	if err := abortedTransfer(l.Addr().String(), 7); err != nil {
		t.Fatal(err)
	}
	want, _ := axfrQuery(7, axfrZone)
	if q := <-got; !bytes.Equal(q, want) {
		t.Errorf("server got %v, want %v", q, want)
	}
	if err := <-readErr; !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the server read %v after the client was done, want a connection reset", err)
	}
}

// fakeNATS accepts one client, sends INFO, answers PING with PONG (after an -ERR when errOn is
// seen) and counts SUB and UNSUB lines; closed is closed when the client has gone and every
// line is counted.
func fakeNATS(t *testing.T, errOn string) (addr string, counts func() (int, int), closed chan struct{}) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	subs, unsubs := 0, 0
	closed = make(chan struct{})
	go func() {
		defer close(closed)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("INFO {\"server_id\":\"fake\"}\r\n"))
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			mu.Lock()
			switch {
			case strings.HasPrefix(line, "SUB "):
				subs++
			case strings.HasPrefix(line, "UNSUB "):
				unsubs++
			}
			mu.Unlock()
			if errOn != "" && strings.HasPrefix(line, errOn) {
				c.Write([]byte("-ERR 'Maximum Subscriptions Exceeded'\r\n"))
			}
			if strings.HasPrefix(line, "PING") {
				c.Write([]byte("PING\r\nPONG\r\n"))
			}
		}
	}()
	return l.Addr().String(), func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return subs, unsubs
	}, closed
}

func TestNATSQueueChurn(t *testing.T) {
	addr, counts, closed := fakeNATS(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	var n int
	var err error
	done := make(chan struct{})
	go func() {
		n, err = natsQueueChurn(ctx, addr, 10000)
		close(done)
	}()
	for {
		if s, _ := counts(); s >= 3*natsBatch {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	<-closed
	if err != nil {
		t.Fatal(err)
	}
	// The server saw a third batch, so the client had the second one's PONG: at least two
	// batches count. The third may not, when the cancel came before its PONG.
	subs, unsubs := counts()
	if n < 2*natsBatch || n%natsBatch != 0 || subs < n || subs > n+natsBatch || subs != unsubs {
		t.Errorf("churn reported %d pairs; the server saw %d SUB and %d UNSUB", n, subs, unsubs)
	}
}

func TestNATSQueueChurnServerError(t *testing.T) {
	addr, _, _ := fakeNATS(t, "UNSUB")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := natsQueueChurn(ctx, addr, 10000)
	if err == nil || !strings.Contains(err.Error(), "Maximum Subscriptions") || n != 0 {
		t.Errorf("natsQueueChurn = %d, %v; want the server's -ERR", n, err)
	}
}

func TestChunkedUploads(t *testing.T) {
	var mu sync.Mutex
	var sizes []int64
	var encodings []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		mu.Lock()
		sizes = append(sizes, n)
		encodings = append(encodings, strings.Join(r.TransferEncoding, ","))
		mu.Unlock()
	}))
	defer srv.Close()
	n := loadUntil(t, func() int { mu.Lock(); defer mu.Unlock(); return len(sizes) }, func(ctx context.Context) (int, error) {
		return chunkedUploads(ctx, srv.URL, 1<<20+5, time.Millisecond)
	})
	mu.Lock()
	defer mu.Unlock()
	if n < 2 || n > len(sizes) {
		t.Errorf("reported %d uploads, the server saw %d", n, len(sizes))
	}
	// The uploads the client counted came whole; one more may have been cut by the cancel.
	for i := 0; i < n && i < len(sizes); i++ {
		if sizes[i] != 1<<20+5 || encodings[i] != "chunked" {
			t.Errorf("upload %d: %d bytes, transfer encoding %q; want %d chunked", i, sizes[i], encodings[i], 1<<20+5)
		}
	}
}

func TestResolvedAlerts(t *testing.T) {
	var mu sync.Mutex
	var batches [][]postableAlert
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v2/alerts" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var b []postableAlert
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		batches = append(batches, b)
		mu.Unlock()
	}))
	defer srv.Close()
	n := loadUntil(t, func() int { mu.Lock(); defer mu.Unlock(); return len(batches) }, func(ctx context.Context) (int, error) {
		return resolvedAlerts(ctx, srv.URL+"/api/v2/alerts", 3, time.Millisecond)
	})
	mu.Lock()
	defer mu.Unlock()
	if n < 2 || n > len(batches) {
		t.Errorf("reported %d posts, the server took %d", n, len(batches))
	}
	b := batches[0]
	if len(b) != 3 || b[0].Labels["alertname"] == b[1].Labels["alertname"] || !b[0].EndsAt.After(b[0].StartsAt) {
		t.Errorf("batch = %+v; want 3 resolved alerts in 3 groups", b)
	}
}

func TestResolvedAlertsRejected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n, err := resolvedAlerts(ctx, srv.URL, 1, time.Millisecond)
	if n != 0 || err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("resolvedAlerts = %d, %v; want 0 and the 400", n, err)
	}
}

// loadUntil runs load until the server has seen three of its requests (seen), stops it, and
// returns how many it reported. Requests go one after another, so the client had the second
// one's response: at least two count (the third's response may have been cut by the cancel;
// waiting for two, a CI run saw the client report one).
func loadUntil(t *testing.T, seen func() int, load func(context.Context) (int, error)) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var n int
	var err error
	done := make(chan struct{})
	go func() {
		n, err = load(ctx)
		close(done)
	}()
	for seen() < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return n
}
