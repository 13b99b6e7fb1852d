package agent_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

func ExampleStart() {
	ctx := context.Background()
	a, err := agent.Start(ctx,
		agent.WithHistory(2*time.Hour),            // default 1h
		agent.WithProfileInterval(30*time.Second), // default 15s
		agent.WithMemoryLimitFromCgroup(0.9),      // GOMEMLIMIT = 90% of the cgroup limit, unless set
		agent.WithLogger(slog.Default()),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Stop(ctx)
	fmt.Println(a.Info().Agent, a.Info().Version)
	// Output: memdoctor 1
}

func ExampleAgent_Handler() {
	a, err := agent.Start(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	// Serve it next to net/http/pprof on the service's debug mux: `memdoctor watch` then
	// finds both.
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", a.Handler())
	go http.ListenAndServe("127.0.0.1:6060", mux)
}

func ExampleListenAndServe() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	// Beyond loopback, a token is required; watch with `memdoctor watch --token`.
	a, err := agent.Start(ctx, agent.WithToken(os.Getenv("MEMDOCTOR_AGENT_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := agent.ListenAndServe(ctx, a, "0.0.0.0:6061"); err != nil {
			log.Print(err)
		}
	}()
}

// The guard lets the application shed load before the memory runs out.
func ExampleWithPressureFunc() {
	var shed atomic.Bool
	a, err := agent.Start(context.Background(),
		agent.WithBudget(2<<30), // default: the cgroup limit
		agent.WithPressureFunc(func(p agent.Pressure) {
			shed.Store(p.Level >= agent.PressureHigh)
			slog.Warn("memory pressure", "level", p.Level, "used_fraction", p.Fraction)
		}))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Stop(context.Background())
	http.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		if shed.Load() {
			http.Error(w, "busy, try again later", http.StatusServiceUnavailable)
			return
		}
		// ... the expensive work
	})
}

// A worker reads the latest level from the channel between jobs.
func ExampleAgent_Pressure() {
	a, err := agent.Start(context.Background(), agent.WithBudget(1<<20)) // any Go program is over 1 MiB
	if err != nil {
		log.Fatal(err)
	}
	defer a.Stop(context.Background())
	p := <-a.Pressure()
	fmt.Println(p.Level)
	// Output: critical
}

// Instead of waiting for the kernel's OOM kill, exit in order with the evidence on disk.
func ExampleWithExitOnHardLimit() {
	a, err := agent.Start(context.Background(),
		agent.WithHardLimit(0.97), // of the budget, here the cgroup limit
		agent.WithExitOnHardLimit("/var/lib/myservice/memdoctor", 15*time.Second),
		agent.WithExitStatus(12))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Stop(context.Background())
	// When RSS stays at 97% of the limit for 15s, the agent writes
	// /var/lib/myservice/memdoctor/memdoctor-<pid>-<time>/ (read it with
	// `memdoctor analyze`), logs one line at Error level, and exits with status 12.
}
