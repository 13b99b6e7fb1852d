// Package auto starts the memdoctor agent in any program that imports it, configured by
// environment variables, and serves it on http.DefaultServeMux under /debug/memdoctor/ (as
// net/http/pprof does under /debug/pprof/):
//
//	import _ "github.com/memdoctor/memdoctor/agent/auto"
//
// A program that serves http.DefaultServeMux (or imports net/http/pprof and serves it) is then
// ready for `memdoctor watch`. The variables, all optional:
//
//	MEMDOCTOR_AGENT=off              do nothing (also "0", "false", "no")
//	MEMDOCTOR_AGENT_ADDR=host:port   also serve the agent there (agent.ListenAndServe: loopback
//	                                 unless a token is set; ":6061" binds 127.0.0.1:6061)
//	MEMDOCTOR_AGENT_TOKEN=secret     require "Authorization: Bearer secret" (16+ characters),
//	                                 on DefaultServeMux too
//	MEMDOCTOR_MEMLIMIT_RATIO=0.9     set GOMEMLIMIT to 90% of the cgroup memory limit, unless
//	                                 GOMEMLIMIT is set
//	MEMDOCTOR_BUDGET=2GiB            the guard's budget (default: the cgroup limit); 2Gi, 1.5G
//	                                 and 800MB too, as Kubernetes writes them (M = 10^6)
//	MEMDOCTOR_FLIGHT_RECORDER=on     keep a runtime/trace flight recorder (costs some CPU)
//	MEMDOCTOR_EXIT_DIR=/path         enable the guard's exit action: write the evidence there
//	                                 and exit when the hard limit holds
//	MEMDOCTOR_EXIT_HOLD=10s          how long the hard limit must hold first
//	MEMDOCTOR_AGENT_LOG=warn         log through slog.Default() at this level (debug, info,
//	                                 warn, error); default: no logging
//
// An invalid value leaves the agent off; Err says why (and MEMDOCTOR_AGENT_LOG shows it).
// Agent returns the running agent, for the pressure channel or a Prometheus collector.
package auto

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent"
	"github.com/memdoctor/memdoctor/agent/bytesize"
)

var (
	mu      sync.Mutex
	running *agent.Agent
	failed  error
)

func init() {
	a, err := start(context.Background(), os.Getenv, http.DefaultServeMux)
	mu.Lock()
	running, failed = a, err
	mu.Unlock()
}

// Agent returns the agent auto mode started; nil when it is off or failed to start.
func Agent() *agent.Agent {
	mu.Lock()
	defer mu.Unlock()
	return running
}

// Err says why auto mode started no agent (nil when it started one, or was switched off).
func Err() error {
	mu.Lock()
	defer mu.Unlock()
	return failed
}

// handleMux is where the handler is registered (http.DefaultServeMux outside tests).
type handleMux interface {
	Handle(pattern string, h http.Handler)
}

// start reads the configuration from getenv, starts the agent and registers its handler.
func start(ctx context.Context, getenv func(string) string, mux handleMux) (a *agent.Agent, err error) {
	cfg, err := parseEnv(getenv)
	if err != nil || cfg.off {
		if err != nil {
			cfg.logger.Warn("memdoctor agent (auto): not started", "err", err)
		}
		return nil, err
	}
	a, err = agent.Start(ctx, cfg.opts...)
	if err != nil {
		err = fmt.Errorf("memdoctor agent (auto): %w", err)
		cfg.logger.Warn(err.Error())
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil { // the program registered /debug/memdoctor/ itself
			err = fmt.Errorf("memdoctor agent (auto): registering %s: %v", agent.Prefix, p)
			cfg.logger.Warn(err.Error())
		}
	}()
	mux.Handle(agent.Prefix, a.Handler())
	if cfg.addr != "" {
		go func() {
			if err := agent.ListenAndServe(ctx, a, cfg.addr); err != nil {
				cfg.logger.Warn("memdoctor agent (auto): not serving "+cfg.addr, "err", err)
			}
		}()
	}
	return a, nil
}

// config is what the environment asks for.
type config struct {
	off    bool
	addr   string
	opts   []agent.Option
	logger *slog.Logger
}

func parseEnv(getenv func(string) string) (config, error) {
	cfg := config{logger: slog.New(slog.DiscardHandler)}
	if lv := strings.TrimSpace(getenv("MEMDOCTOR_AGENT_LOG")); lv != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(lv)); err != nil {
			return cfg, fmt.Errorf("MEMDOCTOR_AGENT_LOG=%q: want debug, info, warn or error", lv)
		}
		cfg.logger = slog.New(levelHandler{slog.Default().Handler(), level})
		cfg.opts = append(cfg.opts, agent.WithLogger(cfg.logger))
	}
	switch strings.ToLower(strings.TrimSpace(getenv("MEMDOCTOR_AGENT"))) {
	case "off", "0", "false", "no":
		cfg.off = true
		return cfg, nil
	}
	cfg.addr = strings.TrimSpace(getenv("MEMDOCTOR_AGENT_ADDR"))
	if tok := getenv("MEMDOCTOR_AGENT_TOKEN"); tok != "" {
		cfg.opts = append(cfg.opts, agent.WithToken(tok))
	}
	if v := getenv("MEMDOCTOR_MEMLIMIT_RATIO"); v != "" {
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || r <= 0 || r > 1 {
			return cfg, fmt.Errorf("MEMDOCTOR_MEMLIMIT_RATIO=%q: want a ratio in (0, 1], e.g. 0.9", v)
		}
		cfg.opts = append(cfg.opts, agent.WithMemoryLimitFromCgroup(r))
	}
	if v := getenv("MEMDOCTOR_BUDGET"); v != "" {
		n, err := ParseSize(v)
		if err != nil {
			return cfg, fmt.Errorf("MEMDOCTOR_BUDGET=%q: %w", v, err)
		}
		cfg.opts = append(cfg.opts, agent.WithBudget(n))
	}
	switch strings.ToLower(strings.TrimSpace(getenv("MEMDOCTOR_FLIGHT_RECORDER"))) {
	case "", "off", "0", "false", "no":
	case "on", "1", "true", "yes":
		cfg.opts = append(cfg.opts, agent.WithFlightRecorder(0, 0))
	default:
		return cfg, fmt.Errorf("MEMDOCTOR_FLIGHT_RECORDER=%q: want on or off", getenv("MEMDOCTOR_FLIGHT_RECORDER"))
	}
	if dir := getenv("MEMDOCTOR_EXIT_DIR"); dir != "" {
		var hold time.Duration
		if v := getenv("MEMDOCTOR_EXIT_HOLD"); v != "" {
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil || d <= 0 {
				return cfg, fmt.Errorf("MEMDOCTOR_EXIT_HOLD=%q: want a duration such as 10s", v)
			}
			hold = d
		}
		cfg.opts = append(cfg.opts, agent.WithExitOnHardLimit(dir, hold))
	}
	return cfg, nil
}

// ParseSize parses a byte size as memdoctor's flags do: "2GiB", "512MiB", "1.5GB", "100MB",
// "1048576", and as Kubernetes writes them, "512Mi", "1G", "1.5Gi" ("M" is 10^6 bytes, "Mi"
// 2^20; "512m", Kubernetes' milli, is refused).
func ParseSize(s string) (uint64, error) { return bytesize.Parse(s) }

// levelHandler passes records at or above level to h.
type levelHandler struct {
	h     slog.Handler
	level slog.Level
}

func (l levelHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.level && l.h.Enabled(ctx, lv)
}
func (l levelHandler) Handle(ctx context.Context, r slog.Record) error { return l.h.Handle(ctx, r) }
func (l levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return levelHandler{l.h.WithAttrs(as), l.level}
}
func (l levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{l.h.WithGroup(name), l.level}
}
