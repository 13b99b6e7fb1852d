package report

import (
	"path/filepath"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// defaultBuckets is how many time slices a chart keeps the lowest and highest reading of: 4000
// points at most, more than a screen has pixels across, whatever the session's length.
const defaultBuckets = 2000

// maxRateBins bounds the slices of the GC rate chart.
const maxRateBins = 1000

// HTMLOptions tune the HTML report.
type HTMLOptions struct {
	// Location is the time zone the page shows times in; nil = time.Local.
	Location *time.Location
	// ZoneName names it on the page ("Europe/Paris"); "" = the location's own name.
	ZoneName string
	// Buckets is how many time slices each chart keeps the extremes of; 0 = 2000.
	Buckets int
	// Serve makes the page `memdoctor serve` serves: snapshots link to pprof's web UI.
	Serve bool
	// Version is memdoctor's version, for the footer.
	Version string
}

// builder assembles a page from a session, the evidence its diagnosis was made from, and the
// diagnosis.
type builder struct {
	s     *session.Session
	d     *diagnose.Diagnosis
	ev    *evidence.Evidence
	opts  HTMLOptions
	t0    time.Time
	end   time.Time // the charts' end: the window's, widened around a single instant
	clock clock
	snaps *snapshots
}

func newBuilder(s *session.Session, ev *evidence.Evidence, d *diagnose.Diagnosis, opts HTMLOptions) *builder {
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Buckets <= 0 {
		opts.Buckets = defaultBuckets
	}
	t0, end := ev.Start, ev.End
	if end.Sub(t0) < time.Second { // one instant (a single profile): a minute around it
		t0, end = t0.Add(-30*time.Second), end.Add(30*time.Second)
	}
	return &builder{
		s: s, d: d, ev: ev, opts: opts, t0: t0, end: end,
		clock: newClock(opts.Location, ev.Start, ev.End),
		snaps: newSnapshots(s, ev),
	}
}

// BuildHTMLData computes the data part of the HTML report: the downsampled series of every
// chart, the findings' places on the timeline and their flame graphs, and the snapshots. ev
// is the evidence d was made from.
func BuildHTMLData(s *session.Session, ev *evidence.Evidence, d *diagnose.Diagnosis, opts HTMLOptions) *PageData {
	data, _ := newBuilder(s, ev, d, opts).build()
	return data
}

func (b *builder) build() (*PageData, []cardView) {
	in := b.ev
	data := &PageData{
		Version: 1,
		T0:      float64(b.t0.UnixMilli()) / 1000,
		End:     roundTo(b.end.Sub(b.t0).Seconds(), 3),
		Zone:    zone(b.opts.Location, b.opts.ZoneName, in.Start, in.End, b.t0),
		Serve:   b.opts.Serve,
	}
	n := b.opts.Buckets
	data.Charts = []Chart{
		memoryChart(in, b.d, b.t0, n),
		heapChart(in, b.t0, n),
		gcChart(in, b.t0, min(n, maxRateBins)),
		goroutinesChart(in, b.t0, n),
	}
	cards, marks := b.findings()
	data.Findings = marks
	data.Snapshots = b.snapshotList(marks)
	return data, cards
}

// snapshotName is a snapshot's file name as the page shows it.
func snapshotName(s *session.Session, r session.ProfileRef) string {
	if s == nil {
		return filepath.Base(r.Path)
	}
	return session.ProfileFileName(r.Kind, r.Time, r.Label)
}

// snapshotList is every snapshot on the served page (for its pprof links and picker); a
// static page keeps only those the findings use and those captured around an event, which
// are marked on the timeline.
func (b *builder) snapshotList(marks []FindingMark) []Snapshot {
	used := make(map[int]bool)
	for _, m := range marks {
		for _, id := range m.Pair {
			used[id] = true
		}
	}
	out := []Snapshot{}
	for i, r := range b.snaps.refs {
		if !b.opts.Serve && !used[i] && r.Label == "" {
			continue
		}
		out = append(out, Snapshot{
			ID: i, Kind: r.Kind, T: roundTo(r.Time.Sub(b.t0).Seconds(), 3), Label: r.Label,
			Name: snapshotName(b.s, r),
		})
	}
	return out
}
