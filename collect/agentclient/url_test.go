package agentclient

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzAgentURL checks that every URL AgentURL accepts is an agent URL that parses again and
// normalises to itself.
func FuzzAgentURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:6060", "127.0.0.1:6060", "http://h:6060/debug/memdoctor/", "http://h/debug/pprof",
		"http://h/x/debug/memdoctor/heap", "ftp://h", "", "h?x#y", "http://[fe80::1%25eth0]:6060", "[::%25\xab]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		u, err := AgentURL(in)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("AgentURL(%q) error is not one line: %q", in, err)
			}
			return
		}
		s := u.String()
		again, err := url.Parse(s)
		if err != nil {
			t.Fatalf("AgentURL(%q) = %q does not parse: %v", in, s, err)
		}
		if !strings.HasSuffix(again.Path, agentDir+"/") || again.Hostname() == "" {
			t.Fatalf("AgentURL(%q) = %q is not an agent URL", in, s)
		}
		if u2, err := AgentURL(s); err != nil || u2.String() != s {
			t.Fatalf("AgentURL(%q) = %q is not idempotent: %v, %v", in, s, u2, err)
		}
	})
}
