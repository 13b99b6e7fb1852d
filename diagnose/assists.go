package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/internal/traceassist"
	"github.com/memdoctor/memdoctor/session"
)

// Assists is what the session's execution traces (the flight-recorder snapshots an embedded
// agent takes around its triggers) say about mark assists: the time allocating goroutines
// spent helping the GC instead of doing their work.
type Assists struct {
	Traces   int
	Wall     time.Duration // traced time
	Total    time.Duration // assist time summed over goroutines
	GCMark   time.Duration
	ByFunc   []FuncAssist // most first
	From, To time.Time
}

// FuncAssist is the assist time of the goroutines started by one function.
type FuncAssist struct {
	Function, Site string
	Assist         time.Duration
	Goroutines     int
}

// Assists analyses the session's traces (computed once). Unreadable traces are named in the
// notes; nil when the session has none.
func (in *Input) Assists() *Assists {
	in.assistsOnce.Do(func() { in.assists = in.readAssists() })
	return in.assists
}

func (in *Input) readAssists() *Assists {
	files, err := session.TraceFiles(in.Session.Dir)
	if err != nil || len(files) == 0 {
		return nil
	}
	a := &Assists{}
	byFn := map[string]*FuncAssist{}
	for _, path := range files {
		sum, err := analyzeTrace(path)
		if err != nil {
			in.notef("skipped trace %s: %v", filepath.Base(path), err)
			continue
		}
		if !sum.End.IsZero() && (sum.End.Before(in.Start) || sum.Start.After(in.End)) {
			continue // outside the window being diagnosed
		}
		a.Traces++
		a.Wall += sum.WallTime
		a.Total += sum.AssistTotal
		a.GCMark += sum.GCMark
		if a.From.IsZero() || sum.Start.Before(a.From) {
			a.From = sum.Start
		}
		if sum.End.After(a.To) {
			a.To = sum.End
		}
		for _, g := range sum.ByGoroutine {
			fa, ok := byFn[g.Function]
			if !ok {
				fa = &FuncAssist{Function: g.Function, Site: g.AssistSite}
				byFn[g.Function] = fa
			}
			fa.Assist += g.Assist
			fa.Goroutines++
		}
	}
	if a.Traces == 0 {
		return nil
	}
	for _, fa := range byFn {
		a.ByFunc = append(a.ByFunc, *fa)
	}
	sort.Slice(a.ByFunc, func(i, j int) bool {
		if a.ByFunc[i].Assist != a.ByFunc[j].Assist {
			return a.ByFunc[i].Assist > a.ByFunc[j].Assist
		}
		return a.ByFunc[i].Function < a.ByFunc[j].Function
	})
	return a
}

func analyzeTrace(path string) (*traceassist.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return traceassist.Analyze(f)
}

// addTo adds what the traces say about mark assists to a finding.
func (a *Assists) addTo(f *Finding) {
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
