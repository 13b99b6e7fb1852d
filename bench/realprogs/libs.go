package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// libCallsPerSec is the load on a library program: requests a second, each one leaking what
// the handler made when the program has the bug.
const libCallsPerSec = 30

// libPrograms are the held-out programs of testdata/libs: small services written for this
// harness, each calling a real library as a handler gets it wrong (a client or database
// handle made per request and never closed), built through the module proxy. memdoctor must
// name the handler at the line of the constructor's call (the version's line), whatever else
// the handler calls in the library; the fixed version closes what it made (-fixed).
func libPrograms() []*program {
	lib := func(name, module, bug, culprit string, line int, links ...string) *program {
		return &program{
			name:    "lib-" + name,
			module:  module,
			pkg:     module,
			local:   name,
			bug:     bug,
			trigger: fmt.Sprintf("%d requests/s to the handler", libCallsPerSec),
			links:   links,
			versions: []version{
				{version: "leak", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{culprit}, line: line},
				{version: "fixed", role: after, args: []string{"-fixed"}},
			},
			setup: setupLib,
		}
	}
	return []*program{
		lib("sqlite", "example.com/libs/sqlite",
			"the handler opens its database with sql.Open (modernc.org/sqlite) for every request and never closes it: a connectionOpener goroutine per *sql.DB",
			"main.(*service).balance", 24, "https://pkg.go.dev/database/sql#Open"),
		lib("nats", "example.com/libs/nats",
			"the handler connects with nats.Connect (nats.go) for every request and never closes the connection: its readLoop and flusher goroutines stay",
			"main.(*service).publish", 29, "https://pkg.go.dev/github.com/nats-io/nats.go#Connect"),
		lib("redis", "example.com/libs/redis",
			"the handler makes a go-redis v8 client with redis.NewClient for every request and never closes it: its pool's reaper goroutine stays",
			"main.(*service).visits", 31, "https://pkg.go.dev/github.com/go-redis/redis/v8#NewClient"),
		lib("grpc", "example.com/libs/grpc",
			"the handler makes a gRPC channel with grpc.NewClient for every request and never closes it: its resolver, balancer and transport goroutines stay",
			"main.(*service).check", 33, "https://pkg.go.dev/google.golang.org/grpc#NewClient"),
	}
}

// setupLib serves a library program's handler and its pprof on one loopback port; its load
// calls the handler libCallsPerSec times a second.
func setupLib(string) (*launch, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	args := []string{"-addr", addr}
	return &launch{
		args:    args,
		pprof:   localURL(ports[0], "/debug/pprof/"),
		noPprof: func() ([]string, string) { return append(args[:len(args):len(args)], "-pprof=false"), addr },
		load: func(ctx context.Context) string {
			ok, failed := libLoad(ctx, "http://"+addr+"/call/", libCallsPerSec)
			return fmt.Sprintf("%d calls answered, %d failed", ok, failed)
		},
	}, nil
}

// libLoad calls base+N perSec times a second, N counting up, a few at a time, until ctx is
// done.
func libLoad(ctx context.Context, base string, perSec int) (ok, failed int64) {
	client := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(time.Second / time.Duration(perSec))
	defer tick.Stop()
	var n, good, bad atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return good.Load(), bad.Load()
		case <-tick.C:
		}
		select {
		case sem <- struct{}{}:
		default:
			bad.Add(1) // every caller is still waiting: the program is too slow
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprint(base, n.Add(1)), nil)
			if err != nil {
				bad.Add(1)
				return
			}
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					bad.Add(1)
				}
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				good.Add(1)
			} else {
				bad.Add(1)
			}
		}()
	}
}
