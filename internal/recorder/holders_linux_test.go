package recorder

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

// TestRunReadsHoldersWhileRunning: run calls Config.Holders once the recording is over and
// before it stops the program, which still runs then; a program that exited on its own is
// said so (running false). What the call returns is counted in the manifest's attempts, and
// ErrNoHolders is not.
func TestRunReadsHoldersWhileRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("records for more than five seconds")
	}
	var lastOut string
	type call struct {
		pid           int
		running, live bool
	}
	record := func(mode string, duration time.Duration, answer func(running bool) error) (call, session.Manifest) {
		cfg := runConfig(t, helperCommand(t, mode)...)
		cfg.Duration = duration
		lastOut = cfg.Out
		var got []call
		cfg.Holders = func(ctx context.Context, pid int, running bool) error {
			_, err := os.Stat("/proc/" + strconv.Itoa(pid))
			got = append(got, call{pid, running, err == nil && procState(pid) != 'Z'})
			return answer(running)
		}
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		s, err := session.Open(cfg.Out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("%s: Holders called %d times, want once", mode, len(got))
		}
		return got[0], s.Manifest
	}
	var called time.Time
	c, m := record("gc", 2*time.Second, func(bool) error {
		called = time.Now()
		time.Sleep(time.Second) // a reading: the program prints gctrace lines meanwhile
		return nil
	})
	if !c.running || !c.live || c.pid != m.Target.PID {
		t.Errorf("at --duration's end: called with %+v (target %d), want the running target", c, m.Target.PID)
	}
	// The session's window ends where the recording did, before the reading.
	if m.End.IsZero() || m.End.After(called) {
		t.Errorf("the session ends at %s, after the reading began at %s", m.End, called)
	}
	s, err := session.Open(lastOut)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	s.EachGC(func(e session.GCEvent) error {
		if n++; e.Time.After(m.End.Add(time.Second)) { // the time base is known to a second
			t.Errorf("a gctrace cycle at %s, after the recording ended at %s", e.Time, m.End)
		}
		return nil
	})
	if n < 10 {
		t.Errorf("%d gctrace cycles recorded", n)
	}
	if a := m.Attempts[holders.Attempt]; a.Tries != 1 || a.OK != 1 {
		t.Errorf("a reading made: attempts %+v", m.Attempts)
	}
	c, m = record("brief", time.Minute, func(running bool) error {
		if running {
			return nil
		}
		return errors.New(holders.UnreadExited)
	})
	if c.running {
		t.Errorf("a program that exited on its own: called with %+v", c)
	}
	if a := m.Attempts[holders.Attempt]; a.OK != 0 || a.LastError != holders.UnreadExited {
		t.Errorf("exited on its own: attempts %+v", m.Attempts)
	}
	for _, n := range m.Notes {
		if strings.Contains(n, holders.UnreadExited) {
			t.Errorf("the holders attempt is a note of its own: %q", n)
		}
	}
	_, m = record("gc", time.Second, func(bool) error { return ErrNoHolders })
	if _, ok := m.Attempts[holders.Attempt]; ok {
		t.Errorf("nothing to read is counted: %+v", m.Attempts)
	}
}

// procState is the state letter of /proc/PID/stat (0 when it cannot be read).
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
