package rule

import (
	"slices"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/proftest"
)

// allocEvidence is n heap profiles 10 s apart from profiles alone, each holding what rows(i)
// gives by stack as {alloc_space so far, inuse_space}.
func allocEvidence(n int, rows func(i int) map[string][2]int64) *evidence.Evidence {
	ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
	g := evidence.NewGauge(evidence.SourceHeapProfile, 0)
	for i := range n {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		r := rows(i)
		s := evidence.Snapshot{Kind: "heap", T: at, Path: "heap-" + at.Format("150405") + ".pb.gz"}
		ev.AddProfile(s, proftest.Heap(at, r))
		var total int64
		for _, v := range r {
			total += v[1]
		}
		g.Add(at, float64(total))
	}
	ev.Live = g.Series()
	ev.Finish(evidence.Options{})
	return ev
}

const (
	exportSite = "example.com/svc/export.(*Catalog).render;example.com/svc/export.(*Catalog).handle"
	ledgerSite = "example.com/svc/orders.(*Ledger).record;example.com/svc/orders.(*Ledger).handle"
	baseSite   = "example.com/svc/catalog.load;main.main"
)

// Bursts the GC runs inside: every profile shows the export's site holding 144 MiB (the
// buffer the GC caught in flight), which it allocated anew, 400 MiB, between each two; the
// ledger leaks beside it. The export is a spike, named with its site, and no culprit of the
// leak.
func TestBurstsInFlightAtEveryGC(t *testing.T) {
	ev := allocEvidence(9, func(i int) map[string][2]int64 {
		k := int64(i)
		return map[string][2]int64{
			exportSite: {36*mib + k*400*mib, 144 * mib},
			ledgerSite: {1 + k*5*mib, 1 + k*5*mib},
			baseSite:   {20 * mib, 20 * mib},
		}
	})
	sp := judgeKind(ev, KindTransientSpike)
	if len(sp.verdicts) != 1 {
		t.Fatalf("want one transient-spike verdict, got %+v (unjudged %+v)", sp.verdicts, sp.unjudged)
	}
	v := sp.verdicts[0]
	c, _ := v.Case.(*SpikeCase)
	if c == nil || c.InFlight == nil || v.Severity.Rank() < Warning.Rank() || len(v.Culprits) == 0 || v.Culprits[0].Function != "example.com/svc/export.(*Catalog).render" {
		t.Fatalf("%s %s %+v, culprits %+v: want a warning of bursts in flight naming the export", v.Severity, v.Confidence, v.Case, v.Culprits)
	}
	if h := c.Peak.Height(); h != 144*mib {
		t.Errorf("height %.1f MiB, want the 144 MiB the site held", h/mib)
	}
	hl := judgeKind(ev, KindHeapLeak)
	if len(hl.verdicts) != 1 {
		t.Fatalf("want one heap-leak verdict, got %+v", hl.verdicts)
	}
	var names []string
	for _, c := range hl.verdicts[0].Culprits {
		names = append(names, c.Function)
	}
	if len(names) == 0 || names[0] != "example.com/svc/orders.(*Ledger).record" || slices.Contains(names, "example.com/svc/export.(*Catalog).render") {
		t.Errorf("leak culprits %v: want the ledger, without the export", names)
	}
}

// Not bursts in flight: a handler that keeps a little of every request allocates more
// between two profiles than it holds, but what it holds rises at every one; a full cache
// holds the same at every profile and replaces a little of it between them.
func TestNotInFlight(t *testing.T) {
	for name, rows := range map[string]func(i int) map[string][2]int64{
		"busy leak": func(i int) map[string][2]int64 {
			k := int64(i)
			return map[string][2]int64{ledgerSite: {k * 600 * mib, 1 + k*30*mib}, baseSite: {20 * mib, 20 * mib}}
		},
		"full cache": func(i int) map[string][2]int64 {
			k := int64(i)
			return map[string][2]int64{
				"example.com/svc/cache.(*LRU).Put;example.com/svc/cache.(*LRU).Get": {100*mib + k*8*mib, 100 * mib},
				baseSite: {20 * mib, 20 * mib},
			}
		},
	} {
		fs := allocEvidence(9, rows)
		for _, v := range judgeKind(fs, KindTransientSpike).verdicts {
			if c, _ := v.Case.(*SpikeCase); c != nil && c.InFlight != nil {
				t.Errorf("%s: bursts in flight: %+v", name, c.InFlight)
			}
		}
	}
}

// Bursts the GC catches at two phases (the lab's firmware-upload from run: a 180 MB body read
// whole every 12 s, profiles every 10 s): the site holds 140 MiB at one profile, 180 at the
// next, then 141, 180, each allocated anew in between. Held more than at the reading before at
// half the readings, it let go of a fifth between them: bursts, not a growth.
func TestBurstsCaughtAtTwoPhases(t *testing.T) {
	held := []int64{140, 180, 141, 180, 140, 181}
	ev := allocEvidence(len(held), func(i int) map[string][2]int64 {
		return map[string][2]int64{
			exportSite: {36*mib + int64(i)*400*mib, held[i] * mib},
			baseSite:   {2 * mib, 2 * mib},
		}
	})
	sp := judgeKind(ev, KindTransientSpike)
	if len(sp.verdicts) != 1 || sp.verdicts[0].Severity.Rank() < Warning.Rank() || len(sp.verdicts[0].Culprits) == 0 ||
		sp.verdicts[0].Culprits[0].Function != "example.com/svc/export.(*Catalog).render" {
		t.Fatalf("spike %+v: want a warning naming the bursts' site", sp.verdicts)
	}
	for _, v := range judgeKind(ev, KindHeapLeak).verdicts {
		if v.Severity.Rank() >= Warning.Rank() {
			t.Errorf("a heap leak at %s: %+v", v.Severity, v)
		}
	}
}
