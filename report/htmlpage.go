package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// pageView is what the page template renders.
type pageView struct {
	Title, Subtitle string
	Zone            string
	Window          string
	Headline        []figure
	Cards           []cardView
	Notes           []string
	NotJudged       []string
	SnapshotViews   []snapshotHTML
	Holders         *holdersView
	Snapshots       string
	SessionDir      string
	Serve           bool
	Version         string
	Generated       string
	Charts          []Chart

	Style, UPlotStyle template.CSS
	UPlot, Common     template.JS
	Flame, App        template.JS
	Data              template.JS
}

// figure is one headline figure.
type figure struct {
	Label, Value, Detail string
}

// HTML writes the report as one self-contained page: the headline figures, resident memory
// over time as a stacked breakdown, the heap against the GC goal, GC rate and CPU, goroutines,
// the memory budget and cgroup limit, the findings on the timeline, and a card per finding
// with its evidence, culprits, flame graph, advice and the pprof commands to dig further.
// Everything it needs (uPlot, the script, the data) is inside: it opens offline. ev is the
// evidence d was made from: the charts draw what the verdict saw.
func HTML(w io.Writer, s *session.Session, ev *evidence.Evidence, d *diagnose.Diagnosis, opts HTMLOptions) error {
	b := newBuilder(s, ev, d, opts)
	data, cards := b.build()
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	v := b.view(cards)
	v.Charts = data.Charts
	if v.Holders, err = b.holdersSection(); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	v.Data = template.JS(js) // json.Marshal escapes <, > and &: no "</script>" can appear
	v.Style = template.CSS(assetStyle)
	v.UPlotStyle = template.CSS(assetUPlotCSS)
	v.UPlot = template.JS(assetUPlotJS)
	v.Common = template.JS(assetCommonJS)
	v.Flame = template.JS(assetFlameJS)
	v.App = template.JS(assetAppJS)
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageTemplate.Execute(bw, v); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return bw.Flush()
}

func (b *builder) view(cards []cardView) pageView {
	d := b.d
	v := pageView{
		Title:         "memdoctor: " + targetName(d),
		Subtitle:      windowLine(d),
		Zone:          zone(b.opts.Location, b.opts.ZoneName, b.ev.Start, b.ev.End, b.t0).Name,
		Window:        b.clock.span(b.ev.Start, b.ev.End),
		Headline:      headline(d),
		Cards:         cards,
		Notes:         d.Notes,
		NotJudged:     notJudgedLines(d),
		SnapshotViews: snapshotViews(d),
		Serve:         b.opts.Serve,
		Version:       b.opts.Version,
	}
	if b.s != nil {
		v.SessionDir = b.s.Dir
	}
	if !d.Generated.IsZero() {
		v.Generated = d.Generated.In(b.opts.Location).Format("2006-01-02 15:04:05")
	}
	heap, gr := 0, 0
	for _, r := range b.snaps.refs {
		if r.Kind == session.KindHeap {
			heap++
		} else {
			gr++
		}
	}
	v.Snapshots = fmt.Sprintf("%d heap and %d goroutine snapshots", heap, gr)
	return v
}

func targetName(d *diagnose.Diagnosis) string {
	t := d.Target
	who := t.Name
	if who == "" {
		who = t.PprofURL
	}
	if who == "" {
		who = "session"
	}
	var bits []string
	if t.PID != 0 {
		bits = append(bits, fmt.Sprintf("pid %d", t.PID))
	}
	if t.GoVersion != "" {
		bits = append(bits, t.GoVersion)
	}
	if len(bits) > 0 {
		who += " (" + strings.Join(bits, ", ") + ")"
	}
	return who
}

// headline returns the headline figures, as the text report's header has them.
func headline(d *diagnose.Diagnosis) []figure {
	s := d.Summary
	var out []figure
	switch {
	case s.RSSPeakBytes > 0:
		out = append(out, figure{"RSS peak", Bytes(s.RSSPeakBytes), fmt.Sprintf("p99 %s · at the end %s", Bytes(s.RSSP99Bytes), Bytes(s.RSSLatestBytes))})
	case d.Source == "profiles":
		out = append(out, figure{"RSS", "unknown", "profiles do not record it"})
	default:
		out = append(out, figure{"RSS", "unknown", "not on this machine"})
	}
	if s.HeapLivePeakBytes > 0 {
		out = append(out, figure{"Live heap peak", Bytes(s.HeapLivePeakBytes), "at the end " + Bytes(s.HeapLiveLatestBytes)})
	}
	if s.HeapGoalPeakBytes > 0 {
		out = append(out, figure{"Heap goal peak", Bytes(s.HeapGoalPeakBytes), ""})
	}
	if s.GCSource != "" {
		out = append(out, figure{"GC rate", fmt.Sprintf("%.2f/s", s.GCPerSecond), fmt.Sprintf("%d cycles (%s)", s.GCCount, s.GCSource)})
		detail := ""
		if s.GCAssistFraction > 0 {
			detail = Percent(s.GCAssistFraction) + " of it in mark assists"
		}
		out = append(out, figure{"GC CPU", Percent(s.GCCPUFraction), detail})
	}
	if s.AllocBytesPerSecond > 0 {
		out = append(out, figure{"Allocation rate", Bytes(uint64(s.AllocBytesPerSecond)) + "/s", ""})
	}
	if s.GoroutinesPeak > 0 {
		out = append(out, figure{"Goroutines peak", fmt.Sprint(s.GoroutinesPeak), fmt.Sprintf("at the end %d", s.GoroutinesLatest)})
	}
	if s.MemoryBudgetBytes > 0 {
		out = append(out, figure{"Memory budget", Bytes(s.MemoryBudgetBytes), "from " + budgetSource(s.MemoryBudgetSource)})
	} else {
		out = append(out, figure{"Memory budget", "unknown", "pass --memory-budget"})
	}
	if s.CgroupLimitBytes > 0 {
		out = append(out, figure{"cgroup limit", Bytes(s.CgroupLimitBytes), ""})
	}
	out = append(out, figure{"Findings", findingCount(d), ""})
	return out
}

func budgetSource(s string) string {
	switch s {
	case "flag", "option":
		return "--memory-budget"
	case "":
		return "unknown source"
	}
	return s
}

func findingCount(d *diagnose.Diagnosis) string {
	if len(d.Findings) == 0 {
		return "none"
	}
	by := map[diagnose.Severity]int{}
	for _, f := range d.Findings {
		by[f.Severity]++
	}
	var parts []string
	for _, sev := range []diagnose.Severity{diagnose.Critical, diagnose.Warning, diagnose.Info} {
		if by[sev] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", by[sev], sev))
		}
	}
	return strings.Join(parts, ", ")
}
