//go:build !nopprof

package lab

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	rpprof "runtime/pprof"
	"strconv"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

// labAgentProfileInterval is the agent's profile interval in the lab: that
// of memdoctor watch's default --interval, so that both vantage points take
// profiles as often.
const labAgentProfileInterval = 10 * time.Second

// startAgent starts the agent when the environment asks for it (AgentEnv),
// and returns nil when it does not.
func startAgent(logger *slog.Logger) (*agent.Agent, error) {
	v, ok := os.LookupEnv(AgentEnv)
	if !ok || v == "" {
		return nil, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: want 1 to embed memdoctor's agent, or 0", AgentEnv, v)
	}
	if !on {
		return nil, nil
	}
	a, err := agent.Start(context.Background(),
		agent.WithProfileInterval(labAgentProfileInterval),
		agent.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("starting memdoctor's agent: %w", err)
	}
	return a, nil
}

// stopAgent stops a, waiting a bounded time for its goroutines.
func stopAgent(a *agent.Agent, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		logger.Warn("memdoctor agent did not stop in time", "err", err)
	}
}

// servingFormat is the scenario's first line: the accuracy matrix finds the pprof URL in it.
const servingFormat = "lab: %s serving pprof on http://%s/debug/pprof/\n"

// servePprof serves the net/http/pprof handlers on mux.
func servePprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}

// mountAgent serves memdoctor's agent at agent.Prefix when the environment asks for it
// (AgentEnv), and returns what stops it.
func mountAgent(mux *http.ServeMux, logger *slog.Logger, name string) (stop func(), err error) {
	ag, err := startAgent(logger)
	if err != nil || ag == nil {
		return func() {}, err
	}
	mux.Handle(agent.Prefix, ag.Handler())
	logger.Info("lab scenario embeds memdoctor's agent", "scenario", name, "path", agent.Prefix)
	return func() { stopAgent(ag, logger) }, nil
}

// detectLeaks runs one goroutine leak detection cycle where the runtime has one (Go 1.27, or
// Go 1.26 with GOEXPERIMENT=goroutineleakprofile).
func detectLeaks() {
	if leaks := rpprof.Lookup("goroutineleak"); leaks != nil {
		leaks.WriteTo(io.Discard, 0)
	}
}
