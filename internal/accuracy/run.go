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
// progress receives a line per scenario recorded.
func RunMatrix(ctx context.Context, cfg Config, scenarios []lab.Scenario, windows []time.Duration, parallel int, progress io.Writer) *Matrix {
	m := &Matrix{Scenarios: scenarios, Windows: windows,
		TimeToVerdict: map[string]map[Vantage]time.Duration{}, Errors: map[string]map[Vantage]error{}}
	var mu sync.Mutex
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			vs, ttv, errs := RecordAndJudge(ctx, cfg, sc, windows)
			mu.Lock()
			defer mu.Unlock()
			m.Add(vs...)
			m.TimeToVerdict[sc.Name], m.Errors[sc.Name] = ttv, errs
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
		TimeToVerdict: map[string]map[Vantage]time.Duration{}, Errors: map[string]map[Vantage]error{}}
	maxTTV := ttvLimit(windows)
	for _, sc := range scenarios {
		m.TimeToVerdict[sc.Name], m.Errors[sc.Name] = map[Vantage]time.Duration{}, map[Vantage]error{}
		for _, v := range Vantages {
			vdir := filepath.Join(dir, sc.Name, string(v))
			if !hasManifest(vdir) {
				m.Errors[sc.Name][v] = fmt.Errorf("no session in %s", vdir)
				continue
			}
			for _, w := range windows {
				m.Add(Judge(vdir, sc, v, w))
			}
			m.TimeToVerdict[sc.Name][v] = TimeToVerdict(vdir, sc, 5*time.Second, maxTTV)
		}
	}
	return m
}
