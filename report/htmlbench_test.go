package report

import (
	"flag"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var htmlBench = flag.Bool("htmlbench", false, "measure the HTML report's size and load time in Chromium for 1-hour and 24-hour sessions")

// TestHTMLSizeAndLoad measures the report of synthetic 1-hour and 24-hour sessions sampled
// every second: the time to make it, its size, and its load time in headless Chromium
// (navigation start to every chart and flame graph drawn, the median of 5 loads). It asserts
// nothing timed; run it with:
//
//	go test ./report -run TestHTMLSizeAndLoad -htmlbench -v
func TestHTMLSizeAndLoad(t *testing.T) {
	if !*htmlBench {
		t.Skip("a measurement: run with -htmlbench")
	}
	b := newBrowser(t)
	for _, c := range []struct {
		name     string
		duration time.Duration
	}{{"1h", time.Hour}, {"24h", 24 * time.Hour}} {
		tmp := t.TempDir()
		sp := synthSpec{start: time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), duration: c.duration, sample: time.Second,
			gcEvery: 2 * time.Second, spikeEvery: 15 * time.Minute, profileEvery: 10 * time.Minute}
		s, ev, d := synthDiagnosed(t, filepath.Join(tmp, "s"), sp)
		page := filepath.Join(tmp, c.name+".html")
		start := time.Now()
		size := writePage(t, page, s, ev, d, HTMLOptions{Location: time.UTC})
		gen := time.Since(start)
		var loads []float64
		for i := range 5 {
			png := ""
			if i == 0 {
				png = filepath.Join(tmp, c.name+".png")
			}
			st := b.loadURL(t, "file://"+page, png, false)
			checkPage(t, b, st, len(d.Findings))
			loads = append(loads, st.ReadyMS)
		}
		slices.Sort(loads)
		t.Logf("%s session, %d samples: report made in %s, %s (%d bytes), loaded in %.0f ms (median of 5; min %.0f, max %.0f)",
			c.name, ev.Samples, gen.Round(time.Millisecond), Bytes(uint64(size)), size, loads[2], loads[0], loads[4])
	}
}
