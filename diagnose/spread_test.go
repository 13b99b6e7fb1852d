package diagnose

import (
	"testing"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// TestLeakSpreadNamesTheSharedFunction: the lab's session-sprawl watched through
// net/http/pprof (recorded, testdata/recorded, its first 65 s), a session middleware that
// keeps a little of every request at five sites of the program (and the headers net/http
// parsed). The heap leak was confirmed, but its culprits were the sites, each a quarter of
// the growth or less (the session store 24%, the handler 22%, the audit line 11%), and the
// middleware they share was not among the first three. It now leads them, with what grew
// under it and how many sites.
func TestLeakSpreadNamesTheSharedFunction(t *testing.T) {
	s, err := session.Open("testdata/recorded/session-sprawl-watch-pprof")
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := DiagnoseSession(s, evidence.Options{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Findings {
		if f.Kind != KindHeapLeak {
			continue
		}
		t.Logf("%s %s: %s; culprits %+v", f.Severity, f.Confidence, f.Title, f.Culprits)
		if f.Confidence != Confirmed || len(f.Culprits) < 2 || f.Culprits[0].Function != "github.com/memdoctor/memdoctor/lab.(*sessionMiddleware).ServeHTTP" ||
			f.Culprits[0].Sites < 3 || f.Culprits[0].Share < 0.5 {
			t.Errorf("want a confirmed leak led by the middleware, over its sites, with most of the growth")
		}
		return
	}
	t.Errorf("no heap-leak finding: %+v", d.NotJudged)
}
