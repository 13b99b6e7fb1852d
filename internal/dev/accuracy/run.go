package accuracy

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/lab"
)

// RunMatrix records the scenarios, parallel at a time, and judges every session at every window.
// A scenario's judging (CPU, not waiting) runs after its recording has made way for the next
// one. progress receives a line per scenario recorded.
func RunMatrix(ctx context.Context, cfg Config, scenarios []lab.Scenario, windows []time.Duration, parallel int, progress io.Writer) *Matrix {
	m := &Matrix{Scenarios: scenarios, Windows: windows,
		TimeToVerdict: map[string]map[Vantage]time.Duration{}, Errors: map[string]map[Vantage]error{},
		Looks: map[string]map[Vantage]Looks{}, LookStep: LookStep}
	var mu sync.Mutex
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		wg.Go(func() {
			sem <- struct{}{}
			start := time.Now()
			rec, err := Record(ctx, cfg, sc)
			<-sem
			vs, looks, errs := JudgeRecording(cfg, sc, rec, err, windows)
			mu.Lock()
			defer mu.Unlock()
			m.Add(vs...)
			m.addLooks(sc.Name, looks)
			m.Errors[sc.Name] = errs
			fmt.Fprintf(progress, "accuracy: %s recorded and judged in %s\n", sc.Name, time.Since(start).Round(time.Second))
		})
	}
	wg.Wait()
	return m
}

// JudgeMatrix judges sessions recorded earlier (RunMatrix's Config.Dir, one directory per
// scenario and vantage point) without recording again: rules are pure functions of the
// evidence, so a change to them is judged on the same sessions.
func JudgeMatrix(dir string, scenarios []lab.Scenario, windows []time.Duration) *Matrix {
	m := &Matrix{Scenarios: scenarios, Windows: windows,
		TimeToVerdict: map[string]map[Vantage]time.Duration{}, Errors: map[string]map[Vantage]error{},
		Looks: map[string]map[Vantage]Looks{}, LookStep: LookStep}
	for _, sc := range scenarios {
		m.Errors[sc.Name] = map[Vantage]error{}
		looks := map[Vantage]Looks{}
		for _, v := range Vantages {
			vdir := filepath.Join(dir, sc.Name, string(v))
			if !hasManifest(vdir) {
				m.Errors[sc.Name][v] = fmt.Errorf("no session in %s", vdir)
				continue
			}
			for _, w := range windows {
				m.Add(Judge(vdir, sc, v, w))
			}
			l, err := Watch(vdir, sc, LookStep, windows[len(windows)-1], ttvLimit(windows))
			if err != nil {
				m.Errors[sc.Name][v] = err
				continue
			}
			looks[v] = l
		}
		m.addLooks(sc.Name, looks)
	}
	return m
}

// addLooks records a scenario's looks by vantage point, and the time to verdict they give.
func (m *Matrix) addLooks(name string, looks map[Vantage]Looks) {
	m.Looks[name] = looks
	m.TimeToVerdict[name] = map[Vantage]time.Duration{}
	for v, l := range looks {
		m.TimeToVerdict[name][v] = l.Verdict
	}
}
