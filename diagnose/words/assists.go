package words

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// addAssists adds what the traces say about mark assists to a finding.
func addAssists(a *facts.Assists, f *Finding) {
	if a == nil || a.Total <= 0 {
		return
	}
	f.Evidence["mark_assist_seconds"] = a.Total.Seconds()
	f.Evidence["traced_seconds"] = a.Wall.Seconds()
	f.Evidence["traces_count"] = float64(a.Traces)
	if a.GCMark > 0 {
		f.Evidence["gc_mark_seconds"] = a.GCMark.Seconds()
	}
	var who []string
	for _, fa := range a.ByFunc {
		if len(who) == 3 || fa.Assist < time.Millisecond {
			break
		}
		s := fmt.Sprintf("%s (%d goroutine(s), %s", fa.Function, fa.Goroutines, humanDuration(fa.Assist.Seconds()))
		if fa.Site != "" && fa.Site != fa.Function {
			s += ", allocating in " + fa.Site
		}
		who = append(who, s+")")
	}
	traces := "The execution trace around it shows"
	if a.Traces > 1 {
		traces = fmt.Sprintf("The %d execution traces around it show", a.Traces)
	}
	f.Detail += fmt.Sprintf(" %s goroutines spending %s in GC mark assists over %s traced: time their requests waited on the collector.",
		traces, humanDuration(a.Total.Seconds()), humanDuration(a.Wall.Seconds()))
	if len(who) > 0 {
		f.Detail += " Most was paid by " + strings.Join(who, "; ") + "."
	}
}
