package lab

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

// AgentEnv is the environment variable that makes a scenario embed
// memdoctor's agent: with AgentEnv=1 the scenario also serves the agent's
// endpoints at /debug/memdoctor/ on its own server, so that the same
// scenario can be watched from the agent's vantage point
// (memdoctor watch finds them next to /debug/pprof/).
const AgentEnv = "MEMDOCTOR_LAB_AGENT"

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
