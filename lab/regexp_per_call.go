package lab

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"
)

func regexpPerCall() Scenario {
	return Scenario{
		Name: "regexp-per-call",
		Story: "A traffic agent sniffs the format of every uploaded sample (JSON, CSV, syslog, Apache " +
			"and nginx logs, logfmt, XML) by matching its first bytes against a list of regular " +
			"expressions, and calls regexp.MustCompile for each pattern on every call. Compiling " +
			"parses the pattern, builds the program and allocates a fresh matcher each time, so " +
			"the sniffer allocates tens of kilobytes per sample and dominates the allocation " +
			"profile and the GC work. The fix is to compile the patterns once, in package-level " +
			"variables, and reuse them: a *regexp.Regexp is safe for concurrent use.",
		Expect: Expect{
			Kinds: []string{kindAllocationHotspot},
			// The hotspot makes the GC run tens of times a second: GOGC is the other lever.
			Allowed:  []string{kindGCOverhead},
			Culprit:  "github.com/memdoctor/memdoctor/lab.sniffFormat",
			Absent:   []string{kindHeapLeak},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runRegexpPerCall,
	}
}

func runRegexpPerCall(ctx context.Context, env Env) error {
	sn := &sniffer{}
	return serve(ctx, env, service{
		name:   "regexp-per-call",
		routes: map[string]http.HandlerFunc{"POST /sniff": sn.handleSniff},
		loads:  []load{sniffLoad(250)},
	})
}

// sniffPatterns recognise formats by their first line.
var sniffPatterns = []struct{ format, expr string }{
	{"json", `^\s*[\[{]\s*"[\w.-]+"\s*:`},
	{"xml", `^\s*<(?:\?xml|[A-Za-z][\w:.-]*[\s>])`},
	{"syslog-rfc5424", `^<\d{1,3}>1 \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) \S+ \S+ \S+ \S+ `},
	{"syslog-rfc3164", `^<\d{1,3}>[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [\w./-]+(?:\[\d+\])?: `},
	{"apache-combined", `^\S+ \S+ \S+ \[[^\]]+\] "[A-Z]+ \S+ HTTP/\d\.\d" \d{3} (?:\d+|-) "[^"]*" "[^"]*"`},
	{"apache-common", `^\S+ \S+ \S+ \[[^\]]+\] "[A-Z]+ \S+ HTTP/\d\.\d" \d{3} (?:\d+|-)\s*$`},
	{"nginx-error", `^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} \[(?:emerg|alert|crit|error|warn|notice|info|debug)\] \d+#\d+: `},
	{"logfmt", `^(?:[A-Za-z_][\w.-]*=(?:"(?:[^"\\]|\\.)*"|[^\s"]*)\s+){2,}[A-Za-z_][\w.-]*=`},
	{"csv", `^(?:"(?:[^"]|"")*"|[^,\n]*)(?:,(?:"(?:[^"]|"")*"|[^,\n]*)){2,}\r?\n`},
}

// sniffFormat names the format of sample by its first matching pattern.
// The bug: it compiles every pattern on every call.
func sniffFormat(sample []byte) string {
	for _, p := range sniffPatterns {
		if regexp.MustCompile(p.expr).Match(sample) {
			return p.format
		}
	}
	return "text"
}

// sniffHead is how much of a sample the sniffer looks at.
const sniffHead = 512

// sniffer classifies uploaded samples. A request body holds several samples
// separated by the ASCII record separator (0x1e).
type sniffer struct {
	mu     sync.Mutex
	counts map[string]int64
}

var sniffBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (sn *sniffer) handleSniff(w http.ResponseWriter, r *http.Request) {
	buf := sniffBuffers.Get().(*bytes.Buffer)
	defer sniffBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, 1<<20)); err != nil {
		http.Error(w, "reading samples: "+err.Error(), http.StatusBadRequest)
		return
	}
	n := 0
	for sample := range bytes.SplitSeq(buf.Bytes(), []byte{0x1e}) {
		if len(sample) > sniffHead {
			sample = sample[:sniffHead]
		}
		sn.count(sniffFormat(sample))
		n++
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write(strconv.AppendInt(buf.Bytes()[:0], int64(n), 10))
}

func (sn *sniffer) count(format string) {
	sn.mu.Lock()
	if sn.counts == nil {
		sn.counts = make(map[string]int64)
	}
	sn.counts[format]++
	sn.mu.Unlock()
}

// sniffSamples is one line of each format the sniffer knows, and some it
// does not.
var sniffSamples = []string{
	`{"ts":"2024-05-01T10:00:00Z","level":"info","msg":"request served","status":200}` + "\n",
	`<?xml version="1.0" encoding="UTF-8"?><events><event id="1"/></events>` + "\n",
	`<165>1 2024-05-01T10:00:00.003Z web01 nginx 4242 ID47 [exampleSDID@32473 iut="3"] request served` + "\n",
	`<34>Oct 11 22:14:15 mymachine su[230]: 'su root' failed for lonvick on /dev/pts/8` + "\n",
	`127.0.0.1 - frank [10/Oct/2024:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08"` + "\n",
	`10.0.0.7 - - [10/Oct/2024:13:55:36 -0700] "POST /api/v1/orders HTTP/1.1" 201 512` + "\n",
	`2024/05/01 10:00:00 [error] 1234#0: *5 connect() failed (111: Connection refused) while connecting to upstream` + "\n",
	`ts=2024-05-01T10:00:00Z level=warn msg="slow query" duration=1.2s table=orders` + "\n",
	`id,name,email,country` + "\n" + `1,"Doe, Jane",jane@example.com,NL` + "\n",
	`Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor.` + "\n",
}

// sniffLoad posts batches of 8 samples, about perSecond batches a second.
func sniffLoad(perSecond int) load {
	var body []byte
	for i := range 8 {
		if i > 0 {
			body = append(body, 0x1e)
		}
		body = append(body, sniffSamples[i*3%len(sniffSamples)]...)
	}
	return load{
		workers: 2,
		every:   time.Second / time.Duration(perSecond),
		send: func(ctx context.Context, c *client, _ int) error {
			return c.send(ctx, call{method: http.MethodPost, path: "/sniff",
				contentType: "text/plain", body: bytes.NewReader(body)})
		},
	}
}
