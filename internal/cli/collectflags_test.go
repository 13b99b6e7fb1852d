package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestCollectFlagErrors: bad --source and --leak-check-every values are usage errors (exit
// 2) with a one-line message naming the flag, before anything is recorded.
func TestCollectFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--source", "agnet", "http://127.0.0.1:1"}, `--source "agnet": want auto, pprof, agent or memory`},
		{[]string{"watch", "--source", "memory", "http://127.0.0.1:1"}, `--source memory reads a local process: give its PID`},
		{[]string{"watch", "--leak-check-every", "5s", "http://127.0.0.1:1"}, "--leak-check-every 5s: want 0 (never) or at least 15s"},
		{[]string{"watch", "--leak-check-every", "-1m", "http://127.0.0.1:1"}, "--leak-check-every -1m0s: want 0 (never)"},
		{[]string{"run", "--leak-check-every", "1s", "--", "true"}, "--leak-check-every 1s: want 0 (never) or at least 15s"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(tc.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 {
			t.Errorf("memdoctor %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, stderr.String(), tc.want)
		}
	}
}

// TestLeakCheckFlagToConfig: 0 means never (the recorder's negative), a duration passes as
// it is, and the default is the recorder's.
func TestLeakCheckFlagToConfig(t *testing.T) {
	e := &env{}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "2m0s"},
		{[]string{"--leak-check-every", "0"}, "-1ns"},
		{[]string{"--leak-check-every", "10m"}, "10m0s"},
	} {
		fs := newFlags(watchCmd, e)
		var cf collectFlags
		cf.register(fs, false)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := cf.config(e, "watch", "x", fs).LeakCheckEvery.String(); got != tc.want {
			t.Errorf("%v: LeakCheckEvery %s, want %s", tc.args, got, tc.want)
		}
	}
}
