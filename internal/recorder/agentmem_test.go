package recorder

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/session"
)

// TestAgentStarved: the agent is taken for starved when its newest sample falls more than 5
// of its sample periods (and 5 s) behind, or when a request to it goes unanswered (a timeout,
// not a refusal or an error page); the memory is asked for once per agent.
func TestAgentStarved(t *testing.T) {
	w, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Manifest{Mode: "watch"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(session.StatusComplete, "")
	cfg := Config{Sample: time.Second}
	cfg.defaults()
	r := newRecorder(cfg, w)
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	fresh := func(period float64) *agentSource {
		a := newAgentSource(nil, wire.Info{SampleIntervalSeconds: period})
		a.newest = t0
		return a
	}

	r.agent = fresh(1)
	r.agent.heardAgent(t0.Add(10*time.Second), nil)
	r.agent.heardAgent(t0.Add(9*time.Second), errors.New("connection refused")) // answered, badly: not starved
	if why := r.agentStarved(t0.Add(15 * time.Second)); why != "" {
		t.Errorf("starved with its newest sample 5 s old: %q", why)
	}
	why := r.agentStarved(t0.Add(15*time.Second + 100*time.Millisecond))
	if !strings.Contains(why, "newest sample is 5.1s old") {
		t.Errorf("its newest sample 5.1 s old: %q, want it starved by its lag", why)
	}
	if again := r.agentStarved(t0.Add(time.Minute)); again != "" {
		t.Errorf("asked for the memory again: %q", again)
	}

	r.agent = fresh(2) // a slower agent: 5 periods are 10 s
	if why := r.agentStarved(t0.Add(8 * time.Second)); why != "" {
		t.Errorf("starved at 8 s behind with 2 s periods: %q", why)
	}
	r.agent.heardAgent(time.Time{}, fmt.Errorf("GET profiles: %w", context.DeadlineExceeded))
	if why := r.agentStarved(t0.Add(time.Second)); !strings.Contains(why, "left 1 request(s) unanswered") {
		t.Errorf("a request unanswered: %q, want it starved", why)
	}

	r.agent = fresh(1)
	r.pprof = nil
	r.mem = &memSource{} // already read from memory
	if why := r.agentStarved(t0.Add(time.Minute)); why != "" {
		t.Errorf("asked for the memory while it is read: %q", why)
	}
}
