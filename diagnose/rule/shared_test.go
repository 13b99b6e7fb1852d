package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/proftest"
)

// A request path that keeps a little at each of many sites, in heap profiles. Stacks are
// leaf first; the sites share the session middleware; the headers net/http parsed are kept
// too, at a site of the standard library's that no function of the program's shares.
const (
	spreadCart     = "example.com/svc/shop.(*Shop).handleCart;example.com/svc/sessions.(*Middleware).ServeHTTP;net/http.HandlerFunc.ServeHTTP;net/http.(*conn).serve"
	spreadStore    = "example.com/svc/sessions.(*Store).open;example.com/svc/sessions.(*Middleware).ServeHTTP;net/http.HandlerFunc.ServeHTTP;net/http.(*conn).serve"
	spreadRegistry = "example.com/svc/sessions.(*Registry).index;example.com/svc/sessions.(*Middleware).ServeHTTP;net/http.HandlerFunc.ServeHTTP;net/http.(*conn).serve"
	spreadAudit    = "example.com/svc/audit.record;example.com/svc/sessions.(*Middleware).ServeHTTP;net/http.HandlerFunc.ServeHTTP;net/http.(*conn).serve"
	spreadHeaders  = "net/textproto.readMIMEHeader;net/http.readRequest;net/http.(*conn).serve"
	spreadBase     = "example.com/svc/catalog.load;main.main"
	spreadShared   = "example.com/svc/sessions.(*Middleware).ServeHTTP"
)

// burstEvidence is n heap profiles step apart, each holding what rows(i) gives by stack, and
// nothing else: profiles curl'd by hand.
func burstEvidence(n int, step time.Duration, rows func(i int) map[string]int64) *evidence.Evidence {
	ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
	g := evidence.NewGauge(evidence.SourceHeapProfile, 0)
	for i := range n {
		at := t0.Add(time.Duration(i) * step)
		r := rows(i)
		addHeap(ev, at, proftest.Held(r))
		var total int64
		for _, v := range r {
			total += v
		}
		g.Add(at, float64(total))
	}
	ev.Live = g.Series()
	ev.Finish(evidence.Options{})
	return ev
}

// The web app: three heap profiles within a second, the heap in use 10 -> 24 MiB
// through every profile, +3.5 MiB at the handler, +3.5 MiB in header parsing, +2 MiB in
// the session store, +1.5 MiB in its registry, +0.5 MiB of audit... No site grew by the
// burst rule's 4 MiB, so it was "none"; the middleware they share holds 7.5 MiB more.
func TestBurstSpreadOverSites(t *testing.T) {
	ev := burstEvidence(3, 450*time.Millisecond, func(i int) map[string]int64 {
		k := int64(i)
		return map[string]int64{
			spreadCart: 1*mib + k*7*mib/4, spreadHeaders: 1*mib + k*7*mib/4, spreadStore: 1*mib + k*mib,
			spreadRegistry: mib/2 + k*3*mib/4, spreadAudit: mib/4 + k*mib/4, spreadBase: 6 * mib,
		}
	})
	out := judgeKind(ev, KindHeapLeak)
	if len(out.verdicts) != 1 {
		t.Fatalf("want one heap-leak verdict, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	v := out.verdicts[0]
	c, _ := v.Case.(*BurstCase)
	if v.Confidence != Suspected || c == nil || c.Doubled {
		t.Fatalf("%s %+v: want a suspected burst named by the function the sites share", v.Confidence, v.Case)
	}
	if len(v.Culprits) < 2 || v.Culprits[0].Function != spreadShared || v.Culprits[0].Sites != 4 || c.Top.Function != spreadShared {
		t.Errorf("culprits %+v: want %s first, over its 4 sites, then the sites", v.Culprits, spreadShared)
	}
	if got := float64(v.Culprits[0].Bytes) / mib; got < 7.4 || got > 7.6 {
		t.Errorf("the middleware holds %.2f MiB more, want 7.5", got)
	}
	if c.Largest.Function != "example.com/svc/shop.(*Shop).handleCart" {
		t.Errorf("largest site %+v, want the handler", c.Largest)
	}
}

// Growth no function of the program's shares, none of its sites growing by what matters,
// through a heap in use that more than doubles through every profile: never "none".
func TestBurstDoubledHeap(t *testing.T) {
	rows := func(i int) map[string]int64 {
		k := int64(i)
		return map[string]int64{
			"example.com/svc/a.fill;example.com/svc/a.workerA": 1*mib + k*3*mib/2, "example.com/svc/b.fill;example.com/svc/b.workerB": 1*mib + k*3*mib/2,
			spreadHeaders: 1*mib + k*3*mib/2, "example.com/svc/c.fill;example.com/svc/c.workerC": 1*mib + k*mib, spreadBase: 2 * mib,
		}
	}
	out := judgeKind(burstEvidence(3, time.Second, rows), KindHeapLeak)
	if len(out.verdicts) != 1 {
		t.Fatalf("6 -> 17 MiB through every profile: want one heap-leak verdict, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	if c, _ := out.verdicts[0].Case.(*BurstCase); c == nil || !c.Doubled || out.verdicts[0].Confidence != Suspected {
		t.Errorf("%s %+v: want a suspected doubling", out.verdicts[0].Confidence, out.verdicts[0].Case)
	}
	// The same sites, the heap not doubled (a larger base), or doubled but not through every
	// profile: no verdict.
	for name, ev := range map[string]*evidence.Evidence{
		"not doubled": burstEvidence(3, time.Second, func(i int) map[string]int64 {
			r := rows(i)
			r[spreadBase] = 20 * mib
			return r
		}),
		"fell between": burstEvidence(3, time.Second, func(i int) map[string]int64 {
			return rows([]int{0, 2, 1}[i])
		}),
	} {
		if out := judgeKind(ev, KindHeapLeak); len(out.verdicts) > 0 {
			t.Errorf("%s: %s %+v", name, out.verdicts[0].Confidence, out.verdicts[0].Case)
		}
	}
}

// A minute-long watch of the same family: the request path keeps 1.5 MiB every 10 s at
// each of four sites under the middleware, on a 200 MiB heap whose total a shrinking cache
// keeps flat and a 150 MiB burst buffer, live at every other GC, swings. No site grows by
// what matters on that heap (10% of it, 20 MiB) in 80 s; the middleware's 48 MiB does, and
// is confirmed.
func TestSiteLeakSpreadOverSites(t *testing.T) {
	leaked := func(i int) int64 { return int64(i) * 3 * mib / 2 }
	burst := func(i int) int64 {
		if i%2 == 1 {
			return 150 * mib
		}
		return 0
	}
	ev := heapEvidence("watch", evidence.SourceRuntimeMetrics, 9, func(i int) map[string]int64 {
		return map[string]int64{
			spreadCart: leaked(i) + 1, spreadStore: leaked(i) + 1, spreadRegistry: leaked(i) + 1, spreadAudit: leaked(i) + 1,
			"example.com/svc/imports.inflateWhole;example.com/svc/imports.handle": burst(i) + 1,
			spreadBase: 100 * mib, "example.com/svc/cache.(*LRU).add;example.com/svc/cache.(*LRU).Get": 100*mib - 4*leaked(i),
		}
	}, func(i int) float64 { return float64(200*mib + burst(i)) })
	out := judgeKind(ev, KindHeapLeak)
	if len(out.verdicts) != 1 {
		t.Fatalf("want one heap-leak verdict, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	v := out.verdicts[0]
	c, _ := v.Case.(*SiteLeakCase)
	if v.Confidence != Confirmed || c == nil || c.Site.Function != spreadShared || c.Site.Sites != 4 {
		t.Fatalf("%s %+v: want a confirmed leak under %s", v.Confidence, v.Case, spreadShared)
	}
	if len(v.Culprits) == 0 || v.Culprits[0].Function != spreadShared {
		t.Errorf("culprits %+v: want %s first", v.Culprits, spreadShared)
	}
}

// The live heap's total shows the leak (confirmed on its own), and its growth is spread:
// no site holds half of it, the middleware the sites share holds all of what the program's
// own code keeps. The culprits start with it; a leak at one site keeps its site first.
func TestHeapLeakSpreadNamesTheSharedFunction(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  func(k int64) map[string]int64
		first string
	}{
		{"spread", func(k int64) map[string]int64 {
			return map[string]int64{spreadCart: 1 + k*mib, spreadStore: 1 + k*mib, spreadRegistry: 1 + k*mib/2, spreadHeaders: 1 + k*mib, spreadBase: 20 * mib}
		}, spreadShared},
		{"one site", func(k int64) map[string]int64 {
			return map[string]int64{spreadCart: 1 + k*mib/4, spreadStore: 1 + 3*k*mib, spreadRegistry: 1 + k*mib/4, spreadBase: 20 * mib}
		}, "example.com/svc/sessions.(*Store).open"},
	} {
		ev := heapEvidence("watch", evidence.SourceRuntimeMetrics, 9, func(i int) map[string]int64 { return tc.rows(int64(i)) },
			func(i int) float64 {
				var total int64
				for _, v := range tc.rows(int64(i)) {
					total += v
				}
				return float64(total)
			})
		out := judgeKind(ev, KindHeapLeak)
		if len(out.verdicts) != 1 || out.verdicts[0].Confidence != Confirmed {
			t.Fatalf("%s: want one confirmed heap-leak verdict, got %+v (unjudged %+v)", tc.name, out.verdicts, out.unjudged)
		}
		if cs := out.verdicts[0].Culprits; len(cs) == 0 || cs[0].Function != tc.first {
			t.Errorf("%s: culprits %+v, want %s first", tc.name, cs, tc.first)
		}
	}
}
