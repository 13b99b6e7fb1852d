package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// The index pages in testdata are real: a small server (seven goroutines leaked by a worker
// whose caller gave up waiting, 7 MiB kept) built with go1.26.8, with go1.26.8
// GOEXPERIMENT=goroutineleakprofile and with go1.27.0, read after one goroutineleak fetch.
func TestParseIndexReal(t *testing.T) {
	base := Index{"allocs": 0, "block": 0, "cmdline": 0, "goroutine": 10, "heap": 0, "mutex": 0, "profile": 0, "symbol": 0, "threadcreate": 0, "trace": 0}
	with := func(kv ...any) Index {
		ix := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			ix[kv[i].(string)] = kv[i+1].(int)
		}
		return ix
	}
	for _, tc := range []struct {
		file string
		want Index
	}{
		{"index_go1.26.html", with("allocs", 2, "heap", 2, "threadcreate", 6)},
		{"index_go1.26-goroutineleakprofile.html", with("allocs", 3, "heap", 3, "threadcreate", 6, "goroutineleak", 7)},
		{"index_go1.27.html", with("allocs", 6, "heap", 6, "threadcreate", 7, "goroutineleak", 7)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseIndex(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("ParseIndex = %v\nwant         %v", got, tc.want)
			}
		})
	}
}

// TestParseIndexShapes covers the table shapes of older Go releases' templates (Go 1.10 and
// before: "<tr><td align=right>N<td><a href=...>name</a>"; Go 1.11 to 1.15: the row split
// over lines, unquoted href) and pages that are not an index.
func TestParseIndexShapes(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		want       Index // nil: an error
	}{
		{"go1.10", "<html><body>profiles:<br>\n<table>\n\n<tr><td align=right>3<td><a href=\"block?debug=1\">block</a>\n\n<tr><td align=right>12<td><a href=\"goroutine?debug=1\">goroutine</a>\n\n<tr><td align=right>41<td><a href=\"heap?debug=1\">heap</a>\n</table>\n<br>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a><br>\n</body></html>",
			Index{"block": 3, "goroutine": 12, "heap": 41}},
		{"go1.11-1.15", "<table>\n<thead><td>Count</td><td>Profile</td></thead>\n\n\t<tr>\n\t<td>5</td><td><a href=goroutine?debug=1>goroutine</a></td>\n\t</tr>\n\n\t<tr>\n\t<td>8</td><td><a href=threadcreate?debug=1>threadcreate</a></td>\n\t</tr>\n</table>",
			Index{"goroutine": 5, "threadcreate": 8}},
		{"escaped custom name", "<tr><td>2</td><td><a href='x?debug=1'>my&lt;profile&gt;&amp;co</a></td></tr>\n<tr><td>9</td><td><a href='goroutine?debug=1'>goroutine</a></td></tr>",
			Index{"goroutine": 9}}, // '<' and '>' are not in a name we keep
		{"entity names", "<tr><td>2</td><td><a href='x'>db.conns&amp;idle</a></td></tr><tr><td>1</td><td><a href='g'>goroutine</a></td></tr>",
			Index{"db.conns&idle": 2, "goroutine": 1}},
		{"first of duplicates", "<tr><td>1</td><td><a>goroutine</a></td></tr><tr><td>99</td><td><a>goroutine</a></td></tr>",
			Index{"goroutine": 1}},
		{"count that is not a number", "<tr><td>-1</td><td><a>goroutine</a></td></tr><tr><td>1e3</td><td><a>heap</a></td></tr>", nil},
		{"count too large", "<tr><td>9999999999999999999</td><td><a>goroutine</a></td></tr>", nil},
		{"link without a count", "<a href=\"goroutine?debug=2\">goroutine</a>", nil},
		{"count from another row", "<tr><td>7</td></tr><tr><td><a>goroutine</a></td></tr>", nil},
		{"not an index", "<html><body>hello</body></html>", nil},
		{"empty", "", nil},
		{"cut in a tag", "<tr><td>4</td><td><a>goroutine</a></td></tr><tr><td", Index{"goroutine": 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIndex(strings.NewReader(tc.page))
			if tc.want == nil {
				if err == nil || !errors.Is(err, ErrNotPprof) {
					t.Errorf("ParseIndex = %v, %v; want an ErrNotPprof error", got, err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Errorf("ParseIndex = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestParseIndexBounded feeds a page listing far more profiles, with far longer names and
// tags, than a program serves: the result stays within the limits.
func TestParseIndexBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("<tr><td>1</td><td><a>goroutine</a></td></tr>\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "<tr><td>%d</td><td><a href='%s'>p%d</a></td></tr>\n", i, strings.Repeat("x", 600), i)
	}
	fmt.Fprintf(&b, "<tr><td>1</td><td><a>%s</a></td></tr>\n", strings.Repeat("n", 1000))
	ix, err := ParseIndex(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ix) != maxIndexEntries || ix["goroutine"] != 1 {
		t.Errorf("%d entries (want the first %d), goroutine %d", len(ix), maxIndexEntries, ix["goroutine"])
	}
	for name := range ix {
		if len(name) > maxIndexName {
			t.Errorf("kept a %d-byte name", len(name))
		}
	}
}

// renderIndex writes an index page the way Go 1.21 to 1.27 do (net/http/pprof.Index).
func renderIndex(ix Index) string {
	var b strings.Builder
	b.WriteString("<html>\n<head>\n<title>/debug/pprof/</title>\n</head>\n<body>\n<table>\n<thead><td>Count</td><td>Profile</td></thead>\n")
	for _, name := range slices.Sorted(maps.Keys(ix)) {
		fmt.Fprintf(&b, "<tr><td>%d</td><td><a href='%s?debug=1'>%s</a></td></tr>\n", ix[name], name, htmlEscape(name))
	}
	b.WriteString("</table>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a>\n</body>\n</html>")
	return b.String()
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

func FuzzParseIndex(f *testing.F) {
	for _, name := range []string{"index_go1.26.html", "index_go1.27.html"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"<tr><td align=right>3<td><a href=\"g\">goroutine</a>",
		"<tr><td>1</td><td><a>goroutine</a></td></tr><tr><td>2</td><td><a>a&amp;b</a>",
		"<td>1<a>goroutine</a><td>x</td><a>heap</a>", "<<<>>>", "<td>", "<a></a>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ix, err := ParseIndex(bytes.NewReader(in))
		if err != nil {
			if ix != nil {
				t.Fatalf("an error and a result: %v", ix)
			}
			return
		}
		if _, ok := ix["goroutine"]; !ok || len(ix) > maxIndexEntries {
			t.Fatalf("no goroutine count, or too many entries: %d", len(ix))
		}
		for name, n := range ix {
			if n < 0 || !validIndexName(name) {
				t.Fatalf("entry %q: %d", name, n)
			}
		}
		slow, err := ParseIndex(iotest.OneByteReader(bytes.NewReader(in)))
		if err != nil || !maps.Equal(slow, ix) {
			t.Fatalf("one byte at a time: %v, %v; at once: %v", slow, err, ix)
		}
		// What was read renders as a Go index page and reads back the same.
		again, err := ParseIndex(strings.NewReader(renderIndex(ix)))
		if err != nil || !maps.Equal(again, ix) {
			t.Fatalf("round trip: %v, %v; want %v", again, err, ix)
		}
	})
}

// TestClientIndexLive reads the index of the test process through the real net/http/pprof
// handler: the goroutine count is runtime.NumGoroutine() of this process.
func TestClientIndexLive(t *testing.T) {
	srv := newPprofServer(t, "/prefix")
	c := newClient(t, srv.URL+"/prefix/debug/pprof/")
	block := make(chan struct{})
	defer close(block)
	for range 50 {
		go func() { <-block }()
	}
	ix, err := c.Index(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	n := runtime.NumGoroutine() // the server's handler goroutine may have come and gone
	if g := ix["goroutine"]; g < 50 || g > n+5 {
		t.Errorf("goroutine count %d; NumGoroutine %d, 50 of them blocked here", g, n)
	}
	if _, ok := ix["heap"]; !ok {
		t.Errorf("no heap count: %v", ix)
	}
	if _, ok := ix["goroutineleak"]; ok != (pprof.Lookup("goroutineleak") != nil) {
		t.Errorf("goroutineleak listed: %v; this %s runtime has it: %v", ok, runtime.Version(), !ok)
	}
}

// TestClientIndexOneAttempt: a failing index read is not retried (it is polled every
// second), and a page that is not an index says so with its start.
func TestClientIndexOneAttempt(t *testing.T) {
	var hits atomic.Int64
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "<html>a login page</html>")
	}))
	c := newClient(t, srv.URL) // three attempts for everything else
	if _, err := c.Index(testContext(t)); err == nil || hits.Load() != 1 {
		t.Errorf("Index on a 503: err %v after %d request(s), want an error after one", err, hits.Load())
	}
	_, err := c.Index(testContext(t))
	if !errors.Is(err, ErrNotPprof) || !strings.Contains(err.Error(), "a login page") {
		t.Errorf("Index of a page that is not an index: %v", err)
	}
}

func BenchmarkParseIndex(b *testing.B) {
	page, err := os.ReadFile("testdata/index_go1.27.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := ParseIndex(bytes.NewReader(page)); err != nil {
			b.Fatal(err)
		}
	}
}
