package evidence

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/collect/traceassist"
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
func (ev *Evidence) Assists() *Assists {
	ev.assistsOnce.Do(func() { ev.assists = ev.readAssists() })
	return ev.assists
}

func (ev *Evidence) readAssists() *Assists {
	if ev.Session == "" {
		return nil
	}
	files, err := session.TraceFiles(ev.Session)
	if err != nil || len(files) == 0 {
		return nil
	}
	a := &Assists{}
	byFn := map[string]*FuncAssist{}
	for _, path := range files {
		sum, err := analyzeTrace(path)
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // the note names the file
		}
		if err != nil {
			ev.profiles.note(fmt.Sprintf("skipped trace %s: %v", filepath.Base(path), err))
			continue
		}
		if !sum.End.IsZero() && (sum.End.Before(ev.Start) || sum.Start.After(ev.End)) {
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
	f, err := session.OpenTrace(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return traceassist.Analyze(f)
}
