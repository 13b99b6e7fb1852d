package agenttest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/agent"
	"github.com/memdoctor/memdoctor/internal/dev/gotool"
	"github.com/memdoctor/memdoctor/session"
)

// TestAgentGoroutineLeakGo127 runs a go1.27.0 service that embeds the agent and leaked 200
// goroutines before starting it: the agent lists a goroutineleak profile from its start,
// and that profile names the leaking function for all 200.
func TestAgentGoroutineLeakGo127(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go 1.27 program")
	}
	bin := gotool.Build(t, gotool.Go127, ".", "./testdata/leakagent")
	cmd := exec.Command(bin, "-first", "200")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address from the service: %v", err)
	}
	base := "http://" + strings.TrimSpace(line) + "/debug/memdoctor/"

	var leak agent.ProfileInfo
	deadline := time.Now().Add(30 * time.Second)
	for leak.Name == "" {
		if time.Now().After(deadline) {
			t.Fatal("the agent listed no goroutineleak profile within 30 s")
		}
		var list []agent.ProfileInfo
		getJSON(t, base+"profiles", &list)
		for _, p := range list {
			if p.Kind == session.KindGoroutineLeak && leak.Name == "" {
				leak = p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if leak.Name != session.ProfileFileName(session.KindGoroutineLeak, leak.Time, "") || leak.Label != "" {
		t.Errorf("listed as %+v", leak)
	}
	resp, err := http.Get(base + "profiles/" + leak.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p, err := profile.Parse(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", leak.Name, err)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "goroutineleak" {
		t.Errorf("sample types %v", p.SampleType)
	}
	var leaked, atSite int64
	for _, s := range p.Sample {
		leaked += s.Value[0]
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function.Name == "main.lookup.func1" {
					atSite += s.Value[0]
				}
			}
		}
	}
	if leaked < 200 || atSite != leaked {
		t.Errorf("%d leaked goroutines, %d of them in main.lookup.func1; want at least the 200 leaked before Start, all there", leaked, atSite)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}
