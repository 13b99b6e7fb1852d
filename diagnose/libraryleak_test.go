package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// TestLibraryGoroutinesNameTheProgram: Caddy v2.6.2's HTTP config loader (bench/realprogs'
// caddy-httploader, watched 60 s, recorded in testdata/recorded) retries after a success and
// drops its responses unclosed: each dropped body pins a connection and net/http's two loops
// for it. The goroutines that pile up are net/http's own (persistConn.readLoop and
// writeLoop), with no frame of Caddy's in their stacks; the finding names Caddy's function
// that made them, first, through its calls that reached those connections' code.
func TestLibraryGoroutinesNameTheProgram(t *testing.T) {
	s, err := session.Open("testdata/recorded/caddy-httploader-v2.6.2")
	if err != nil {
		t.Fatal(err)
	}
	d := diagnoseSession(t, s, Options{})
	var leak *Finding
	for i := range d.Findings {
		if d.Findings[i].Kind == KindGoroutineLeak {
			leak = &d.Findings[i]
		}
	}
	if leak == nil || leak.Severity.Rank() < Warning.Rank() {
		t.Fatalf("no goroutine-leak warning: %+v", d.Findings)
	}
	if len(leak.Culprits) == 0 || !strings.HasPrefix(leak.Culprits[0].Function, "github.com/caddyserver/caddy/v2/caddyconfig.") {
		t.Fatalf("the first culprit is not Caddy's config loader: %+v", leak.Culprits)
	}
	if !strings.Contains(leak.Detail, leak.Culprits[0].Function) || !strings.Contains(leak.Detail, "net/http") {
		t.Errorf("the detail does not say who made net/http's goroutines: %s", leak.Detail)
	}
}

// TestNoRuntimeCulprits: the runtime and the standard library are never culprits. The lab's
// goroutine-leak under memdoctor run (the accuracy matrix's recording, judged at 60 s) had
// runtime.mallocgc first among its heap-leak's culprits (the leaked goroutines' stacks, grown
// by the runtime); Caddy's leaked connections had net/http's loops after Caddy's function.
func TestNoRuntimeCulprits(t *testing.T) {
	for _, dir := range []string{"testdata/recorded/goroutine-leak-run", "testdata/recorded/caddy-httploader-v2.6.2"} {
		s, err := session.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := DiagnoseSession(s, evidence.Options{Until: s.Manifest.Start.Add(time.Minute)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range d.Findings {
			for _, c := range f.Culprits {
				if !c.Own || strings.HasPrefix(c.Function, "runtime.") || strings.HasPrefix(c.Function, "internal/") || strings.HasPrefix(c.Function, "net/http.") {
					t.Errorf("%s: %s names %s", dir, f.Kind, c.Function)
				}
			}
		}
	}
}
