package recorder

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// startServer starts the serve helper on addr and waits until it listens.
func startServer(t *testing.T, addr string) *exec.Cmd {
	t.Helper()
	cmd := helperCmd(t, "serve", "-addr", addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening") {
		t.Fatalf("the server did not start: %q, %v", line, err)
	}
	return cmd
}

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitSession polls the running session until ok accepts it.
func waitSession(t *testing.T, dir, what string, ok func(*session.Session) bool) *session.Session {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if s, err := session.Open(dir); err == nil && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			s, _ := session.Open(dir)
			t.Fatalf("waited a minute for %s; manifest %+v", what, s.Manifest)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func procSamplesOf(t *testing.T, s *session.Session, pid int) int {
	n := 0
	for _, smp := range samplesOf(t, s) {
		if smp.Proc != nil && smp.Proc.PID == pid {
			n++
		}
	}
	return n
}

// TestWatchFollowsRestart watches a real server, kills it and starts another on the same
// port: the watch must follow the new process, record the restart in the manifest and say
// so in a note, and go on until stopped.
func TestWatchFollowsRestart(t *testing.T) {
	addr := freeAddr(t)
	first := startServer(t, addr)
	cfg := watchConfig(t)
	cfg.Duration, cfg.RestartGrace = 0, 30*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		res Result
		err error
	}
	done := make(chan result, 1)
	go func() { res, err := Watch(ctx, cfg, "http://"+addr); done <- result{res, err} }()
	waitSession(t, cfg.Out, "samples of the first server", func(s *session.Session) bool {
		return procSamplesOf(t, s, first.Process.Pid) >= 3
	})

	killed := time.Now()
	first.Process.Kill()
	first.Wait()
	time.Sleep(1500 * time.Millisecond) // the watch notices the process is gone
	second := startServer(t, addr)
	started := time.Now()
	waitSession(t, cfg.Out, "samples of the second server", func(s *session.Session) bool {
		return procSamplesOf(t, s, second.Process.Pid) >= 3
	})
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Status != session.StatusInterrupted {
		t.Errorf("status %s (%s): the watch should have gone on until stopped", r.res.Status, r.res.Detail)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Manifest.Restarts) != 1 {
		t.Fatalf("restarts %v, want one", s.Manifest.Restarts)
	}
	if at := s.Manifest.Restarts[0]; at.Before(killed.Add(-2*time.Second)) || at.After(started.Add(2*time.Second)) {
		t.Errorf("restart at %v; the first server was killed at %v, the second started at %v", at, killed, started)
	}
	want := fmt.Sprintf("new PID %d (was %d)", second.Process.Pid, first.Process.Pid)
	if !slices.ContainsFunc(s.Manifest.Notes, func(n string) bool {
		return strings.Contains(n, "the service restarted at") && strings.Contains(n, want)
	}) {
		t.Errorf("notes %q lack the restart with %q", s.Manifest.Notes, want)
	}
	if n := len(s.ProfilesOf(session.KindHeap, true)); n < 2 {
		t.Errorf("%d heap profiles", n)
	}
}

// TestWatchEndsWhenServiceStaysAway: a service that does not come back within the grace
// period ends the watch, saying so.
func TestWatchEndsWhenServiceStaysAway(t *testing.T) {
	addr := freeAddr(t)
	srv := startServer(t, addr)
	cfg := watchConfig(t)
	cfg.Duration, cfg.RestartGrace = 0, time.Second
	done := make(chan Result, 1)
	go func() { res, _ := Watch(context.Background(), cfg, "http://"+addr); done <- res }()
	waitSession(t, cfg.Out, "samples", func(s *session.Session) bool { return procSamplesOf(t, s, srv.Process.Pid) >= 2 })
	srv.Process.Kill()
	res := <-done
	if res.Status != session.StatusTargetExited || !strings.Contains(res.Detail, "did not come back within 1s") {
		t.Errorf("status %s (%s)", res.Status, res.Detail)
	}
	// The closed manifest has the final counts, not those of the last periodic write.
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Manifest.Attempts[session.AttemptProc].OK, procSamplesOf(t, s, srv.Process.Pid); got != want {
		t.Errorf("the manifest counts %d /proc reads that succeeded; the session has %d /proc samples", got, want)
	}
}
