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
	summary: "attach to a running service that serves net/http/pprof, record a session, diagnose it",
	help: `Watch attaches to a running service through its net/http/pprof endpoints. URL is the service's
base (http://127.0.0.1:6060) or its pprof index (http://127.0.0.1:6060/debug/pprof/). When
the URL is on this machine, watch finds the process listening on that port (through
/proc/net/tcp{,6} and the socket's inode) and samples its /proc and cgroup as well; it says
so when it can't. Watch stops at --duration, on Ctrl-C, or when the service goes away, and
prints the diagnosis. It never forces a GC in the service.`,
	examples: []string{
		"memdoctor watch --duration 10m http://127.0.0.1:6060",
		"memdoctor watch --interval 30s --memory-budget 4GiB --json - http://10.0.0.7:6060/debug/pprof/",
	},
}

func init() { watchCmd.run = runWatch }

func runWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(watchCmd, e)
	var cf collectFlags
	cf.register(fs, false)
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
	return record(ctx, e, cfg, cf.output, func(ctx context.Context) (recorder.Result, error) {
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
