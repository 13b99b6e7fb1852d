package recorder

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/session"
)

func TestNotTheService(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		rss, heap uint64
		want      bool
	}{
		{46 * mib / 10, 107 * mib, true}, // kubectl port-forward in front of a 107 MiB heap
		{10 * mib, 40 * mib, true},       // 40 > 1.5*10+16
		{10 * mib, 31 * mib, false},      // 31 = 1.5*10+16: not above
		{120 * mib, 100 * mib, false},    // the service itself
		{0, 15 * mib, false},             // a heap no larger than the slack
		{100 * mib, 200 * mib, true},
		{200 * mib, 316 * mib, false},
	} {
		if got := notTheService(c.rss, c.heap); got != c.want {
			t.Errorf("RSS %d MiB, heap in use %d MiB: %v, want %v", c.rss/mib, c.heap/mib, got, c.want)
		}
	}
}

func needProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watch samples /proc on Linux only")
	}
}

// procSamples counts the samples with /proc figures, and those of pid.
func procSamples(t *testing.T, s *session.Session, pid int) (all, ofPID int, maxRSS uint64) {
	for _, smp := range samplesOf(t, s) {
		if smp.Proc != nil {
			all++
			if smp.Proc.PID == pid {
				ofPID++
			}
			maxRSS = max(maxRSS, smp.Proc.RSSBytes)
		}
	}
	return all, ofPID, maxRSS
}

// TestWatchBehindProxy watches a real Go service through a real reverse proxy in another
// process: the process listening on the URL's port is the proxy, whose RSS is far below the
// service's Go heap. Its /proc readings are dropped with a note; none reaches the session.
func TestWatchBehindProxy(t *testing.T) {
	needProc(t)
	svc := startHelper(t, "service", "")
	proxy := startHelper(t, "proxy", svc.url)
	cfg := watchConfig(t)
	res, err := Watch(context.Background(), cfg, proxy.url)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Errorf("status %s: %s", res.Status, res.Detail)
	}
	s := openSession(t, cfg.Out)
	notes := strings.Join(s.Manifest.Notes, "\n")
	for _, want := range []string{"is not the service", "pass --pid", "while the service's Go heap is", "found listening on :"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if all, _, _ := procSamples(t, s, proxy.pid); all != 0 {
		t.Errorf("%d samples with the proxy's /proc figures reached the session", all)
	}
	goSamples := 0
	for _, smp := range samplesOf(t, s) {
		if smp.Go != nil && smp.Go.HeapObjectsBytes >= serviceHeap {
			goSamples++
		}
	}
	if goSamples == 0 {
		t.Error("no MemStats sample of the service through the proxy")
	}
	if tg := s.Manifest.Target; tg.PID == proxy.pid || tg.Local || tg.PprofURL == "" {
		t.Errorf("the manifest still describes the proxy: %+v", tg)
	}
}

// TestWatchPIDFlag names the service's process with --pid while watching through the proxy:
// its /proc is sampled, and nothing is dropped.
func TestWatchPIDFlag(t *testing.T) {
	needProc(t)
	svc := startHelper(t, "service", "")
	proxy := startHelper(t, "proxy", svc.url)
	cfg := watchConfig(t)
	cfg.PID = svc.pid
	if _, err := Watch(context.Background(), cfg, proxy.url); err != nil {
		t.Fatal(err)
	}
	s := openSession(t, cfg.Out)
	all, ofSvc, maxRSS := procSamples(t, s, svc.pid)
	if all == 0 || ofSvc != all || maxRSS < serviceHeap {
		t.Errorf("%d /proc samples, %d of the service (RSS up to %d MiB), want all of the service's %d MiB", all, ofSvc, maxRSS>>20, serviceHeap>>20)
	}
	if notes := strings.Join(s.Manifest.Notes, "\n"); strings.Contains(notes, "not the service") {
		t.Errorf("the service itself was taken for a proxy:\n%s", notes)
	}
	if s.Manifest.Target.PID != svc.pid || !s.Manifest.Target.Local {
		t.Errorf("target %+v, want the service's pid %d", s.Manifest.Target, svc.pid)
	}

	cfg.PID, cfg.Out = 1<<30, cfg.Out+"-2"
	if _, err := Watch(context.Background(), cfg, proxy.url); err == nil || !strings.Contains(err.Error(), "--pid") {
		t.Errorf("--pid of no process: %v, want an error naming --pid", err)
	}
}

// TestWatchPID attaches to real child processes by PID alone: it finds the port their pprof
// or agent serves on and samples their /proc.
func TestWatchPID(t *testing.T) {
	needProc(t)
	for _, mode := range []string{"service", "agent"} {
		t.Run(mode, func(t *testing.T) {
			h := startHelper(t, mode, "")
			cfg := watchConfig(t)
			if _, err := WatchPID(context.Background(), cfg, h.pid); err != nil {
				t.Fatal(err)
			}
			s := openSession(t, cfg.Out)
			tg := s.Manifest.Target
			if tg.PID != h.pid || !tg.Local {
				t.Errorf("target %+v, want pid %d", tg, h.pid)
			}
			if mode == "service" && tg.PprofURL != h.url+"/debug/pprof/" {
				t.Errorf("pprof URL %q, want %s/debug/pprof/", tg.PprofURL, h.url)
			}
			if mode == "agent" && tg.AgentURL != h.url+"/debug/memdoctor/" {
				t.Errorf("agent URL %q, want %s/debug/memdoctor/", tg.AgentURL, h.url)
			}
			if all, of, _ := procSamples(t, s, h.pid); all == 0 || of != all {
				t.Errorf("%d /proc samples, %d of pid %d", all, of, h.pid)
			}
			if len(s.ProfilesOf(session.KindHeap, false)) == 0 {
				t.Error("no heap profile")
			}
		})
	}
}

// TestWatchPIDNothingServed: a process that serves neither pprof nor an agent, watched with a
// source that is not its memory, or no process at all, is refused in one line. (With the
// automatic source such a process is read from its memory when its executable has the
// symbols for it: a test binary go test -c built has them, one go test ran has none.)
func TestWatchPIDNothingServed(t *testing.T) {
	needProc(t)
	proxy := startHelper(t, "proxy", "http://127.0.0.1:1") // listens, but serves no pprof
	for pid, want := range map[int]string{
		proxy.pid: "serves neither net/http/pprof nor a memdoctor agent",
		1 << 30:   "no such process",
		-3:        "not a process ID",
	} {
		cfg := watchConfig(t)
		cfg.Source = SourcePprof
		_, err := WatchPID(context.Background(), cfg, pid)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("pid %d: %v, want one line with %q", pid, err, want)
		}
	}
}
