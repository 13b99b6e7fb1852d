// agent-spike is the program the agent's end-to-end test watches: it embeds the memdoctor
// agent (with its flight recorder, and a profile round every 5s), serves it and
// net/http/pprof on loopback, serves steady requests (main.serveRequests, about 64 MB/s of
// short-lived garbage: the GCs a busy service runs), and a few seconds after it starts makes
// one transient spike: main.buildReport holds about 200 MiB of report rows for a second or
// so, then drops them.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

var sink []byte

func main() {
	spikeAfter := flag.Duration("spike-after", 8*time.Second, "when to make the spike")
	rate := flag.Int("garbage-mib-per-s", 64, "steady garbage to make per second, in MiB")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	a, err := agent.Start(ctx, agent.WithFlightRecorder(0, 0), agent.WithProfileInterval(5*time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.Handle(agent.Prefix, a.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.DefaultServeMux}
	go srv.Serve(ln)
	fmt.Printf("agent-spike: serving on http://%s/\n", ln.Addr())

	spike := time.After(*spikeAfter)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			srv.Close()
			a.Stop(context.Background())
			return
		case <-spike:
			n := buildReport()
			fmt.Printf("agent-spike: report of %d rows built\n", n)
		case <-tick.C:
			serveRequests(*rate << 20 / 100)
		}
	}
}

// serveRequests makes n bytes of short-lived garbage, as a tick's worth of requests would.
//
//go:noinline
func serveRequests(n int) {
	for done := 0; done < n; done += 16 << 10 {
		sink = make([]byte, 16<<10)
	}
}

// buildReport builds a report of about 200 MiB of rows over about a second, holds it a
// moment (as if writing it out) and drops it: a transient spike.
//
//go:noinline
func buildReport() int {
	rows := make([][]byte, 0, 51200)
	for i := range 51200 {
		row := make([]byte, 4096)
		for j := 0; j < len(row); j += 512 {
			row[j] = byte(i + j)
		}
		rows = append(rows, row)
		if i%5120 == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond)
	return len(rows)
}
