package cli

import (
	"context"
	"net/url"
	"strings"

	"github.com/memdoctor/memdoctor/internal/recorder"
)

var watchCmd = &command{
	name:    "watch",
	args:    "[flags] URL",
	summary: "attach to a running service (net/http/pprof or the memdoctor agent), record a session, diagnose it",
	help: `Watch attaches to a running service through its net/http/pprof endpoints, its embedded memdoctor
agent (/debug/memdoctor/), or both. URL is the service's base (http://127.0.0.1:6060), its
pprof index (http://127.0.0.1:6060/debug/pprof/) or its agent (.../debug/memdoctor/). With an
agent, watch copies the whole history it keeps (an hour of runtime/metrics samples, profiles,
the before/after pairs of spikes, traces), including what happened before watch attached,
and then follows it. An agent bound beyond loopback needs its token: --token, or the
MEMDOCTOR_TOKEN environment variable. When the URL is on this machine, watch finds the
process listening on that port (through /proc/net/tcp{,6} and the socket's inode) and
samples its /proc and cgroup as well, unless the agent does; it says so when it can't.
A service that goes away and answers again at the same URL within 30s (restarted by its
supervisor) is followed: watch finds its new process and notes the restart in the session,
since its cumulative counters start again. Watch stops at --duration, on Ctrl-C, or when the
service stays away, and prints the diagnosis. It never forces a GC in the service.`,
	examples: []string{
		"memdoctor watch --duration 10m http://127.0.0.1:6060",
		"memdoctor watch --interval 30s --memory-budget 4GiB --json - http://10.0.0.7:6060/debug/pprof/",
		"MEMDOCTOR_TOKEN=... memdoctor watch --duration 5m http://10.0.0.7:6061/debug/memdoctor/",
	},
}

func init() { watchCmd.run = runWatch }

func runWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(watchCmd, e)
	var cf collectFlags
	cf.register(fs, false)
	token := fs.String("token", "", "bearer `TOKEN` for a memdoctor agent's endpoints (default: $MEMDOCTOR_TOKEN)")
	pos, err := parse(watchCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("watch: want exactly one URL, e.g. memdoctor watch http://127.0.0.1:6060")
	}
	if err := cf.check(); err != nil {
		return err
	}
	cfg := cf.config(e, "watch", hostName(pos[0]), fs)
	cfg.Token = *token
	if cfg.Token == "" {
		cfg.Token = e.getenv("MEMDOCTOR_TOKEN")
	}
	if _, ok := cfg.Flags["token"]; ok {
		cfg.Flags["token"] = "(redacted)" // the manifest records the flags: never the secret
	}
	return record(ctx, e, cfg, cf.output, func(ctx context.Context, abort <-chan struct{}) (recorder.Result, error) {
		cfg.Abort = abort
		return recorder.Watch(ctx, cfg, pos[0])
	})
}

// hostName names a watch session after the URL's host and port.
func hostName(raw string) string {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "watch"
}
