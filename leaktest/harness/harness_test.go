package harness

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var kept [][]byte

// Run writes, per test, a start event and a result: go test's verdict of its first run (with
// its output), then, for a test that passed, CheckTest's report; a test that leaks ends the
// process's checks with a restart event when asked.
func TestRun(t *testing.T) {
	results := filepath.Join(t.TempDir(), "events.jsonl")
	cfg, _ := json.Marshal(Config{Results: results, TimeLimit: 5 * time.Second, Only: []string{"TestSkips", "TestFails", "TestFine", "TestLeaks", "TestSlow"}, FreshAfterLeak: true})
	t.Setenv(Env, string(cfg))
	defer func() { kept = nil }()
	Run(t, []testing.InternalTest{
		{Name: "TestSkips", F: func(t *testing.T) { t.Skip("needs a database") }},
		{Name: "TestNotAsked", F: func(t *testing.T) { t.Error("Only leaves it out") }},
		{Name: "TestFails", F: func(t *testing.T) { t.Error("wrong answer") }},
		{Name: "TestFine", F: func(t *testing.T) { _ = make([]byte, 64) }},
		{Name: "TestLeaks", F: func(t *testing.T) { kept = append(kept, make([]byte, 1024)) }},
		{Name: "TestAfterTheLeak", F: func(t *testing.T) {}},
	})
	f, err := os.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	byTest := map[string]Event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if e.Event != "alive" {
			got = append(got, e.Event+" "+e.Test)
		}
		if e.Event == "result" {
			byTest[e.Test] = e
		}
	}
	want := "start TestSkips|result TestSkips|start TestFails|result TestFails|start TestFine|check TestFine|result TestFine|start TestLeaks|check TestLeaks|result TestLeaks|restart "
	if strings.Join(got, "|") != want {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if e := byTest["TestSkips"]; e.Plain.Verdict != "skip" || !strings.Contains(e.Plain.Output, "needs a database") || e.Report != nil {
		t.Errorf("TestSkips: %+v", e.Plain)
	}
	if e := byTest["TestFails"]; e.Plain.Verdict != "fail" || !strings.Contains(e.Plain.Output, "wrong answer") {
		t.Errorf("TestFails: %+v", e.Plain)
	}
	if e := byTest["TestFine"]; e.Plain.Verdict != "pass" || e.Report == nil || e.Report.Failed() {
		t.Errorf("TestFine: %+v %+v", e.Plain, e.Report)
	}
	if e := byTest["TestLeaks"]; e.Report == nil || !e.Report.Failed() || !strings.Contains(e.Report.Message, "with the runs of TestLeaks") {
		t.Errorf("TestLeaks: %+v", e.Report)
	}
}

// Outside memdoctor test, Run skips.
func TestRunSkipsWithoutMemdoctor(t *testing.T) {
	os.Unsetenv(Env)
	ran := false
	t.Run("run", func(t *testing.T) {
		Run(t, []testing.InternalTest{{Name: "TestX", F: func(t *testing.T) { ran = true }}})
	})
	if ran {
		t.Error("Run ran a test outside memdoctor test")
	}
}

func TestPanicked(t *testing.T) {
	stack := "goroutine 1 [running]:\nruntime/debug.Stack()\n\t/go/debug.go:1\nmain.f.func1()\n\t/x.go:2\npanic({0x1, 0x2})\n\t/go/panic.go:860\nmain.boom()\n\t/x.go:9 +0x1\n"
	if got := panicked([]byte(stack)); got != "main.boom()\n\t/x.go:9 +0x1\n" {
		t.Errorf("panicked = %q", got)
	}
}

// A test whose first run is too slow for ten runs in three times the time limit is not
// checked, and the result says why.
func TestRunTooSlow(t *testing.T) {
	results := filepath.Join(t.TempDir(), "events.jsonl")
	cfg, _ := json.Marshal(Config{Results: results, TimeLimit: 100 * time.Millisecond})
	t.Setenv(Env, string(cfg))
	Run(t, []testing.InternalTest{{Name: "TestSlow", F: func(t *testing.T) { time.Sleep(50 * time.Millisecond) }}})
	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"not_checked":"its first run took`) || strings.Contains(string(data), `"event":"check"`) {
		t.Errorf("a test too slow for its time limit:\n%s", data)
	}
}
