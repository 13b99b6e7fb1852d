package promapi

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/memdoctor/memdoctor/evidence"
)

// group is targets read together, sorted by job and instance.
type group []Labels

// groupTargets cuts the sorted targets into groups of at most size.
func groupTargets(ts []Labels, size int) []group {
	var out []group
	for len(ts) > 0 {
		n := min(size, len(ts))
		out = append(out, group(ts[:n]))
		ts = ts[n:]
	}
	return out
}

// matchers selects the group's targets by job and instance. With several jobs it may match
// more targets than the group holds: their readings are ignored.
func (g group) matchers() string {
	var jobs, insts []string
	for _, l := range g {
		if j := regexp.QuoteMeta(l["job"]); !slices.Contains(jobs, j) {
			jobs = append(jobs, j)
		}
		if i := regexp.QuoteMeta(l["instance"]); !slices.Contains(insts, i) {
			insts = append(insts, i)
		}
	}
	return "job=~" + strconv.Quote(strings.Join(jobs, "|")) + ", instance=~" + strconv.Quote(strings.Join(insts, "|"))
}

// joinMatchers joins two lists of matchers.
func joinMatchers(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}

// build is one target's readings, one grid per quantity.
type build struct {
	labels   Labels
	g        [nQuantities]*grid
	version  string
	versionT model.Time
}

func newBuild(l Labels) *build { return &build{labels: l} }

// held is how many quantities are counted per target when the readings held at once are
// bounded (go_info's version is one string).
func held() int { return len(queries) - 1 }

// grid is one target's readings of one quantity. A range query's answer lies on a grid of
// steps from its start, so a reading costs 8 bytes until the target's evidence is built
// (an evidence series costs several times that, and is built one target at a time).
type grid struct {
	base, step int64     // milliseconds
	v          []float64 // NaN: no reading
}

// put records v at ts, on the nearest step (servers that align the start to the step keep
// a regular grid too).
func (g *grid) put(ts int64, v float64) {
	if ts < g.base-g.step/2 {
		return
	}
	if i := (ts - g.base + g.step/2) / g.step; i < int64(len(g.v)) {
		g.v[i] = v
	}
}

// series turns a quantity's readings into an evidence series (for a setting, its changes).
func (b *build) series(q quantity) evidence.Series {
	g := b.g[q]
	if g == nil {
		return evidence.Series{}
	}
	qq := queryOf(q)
	bl := evidence.NewGauge(evidence.SourcePrometheus, qq.quantum)
	if qq.counter {
		bl = evidence.NewCounter(evidence.SourcePrometheus)
	}
	prev := math.NaN()
	for i, v := range g.v {
		if math.IsNaN(v) || qq.setting && v == prev {
			continue
		}
		bl.Add(time.UnixMilli(g.base+int64(i)*g.step).UTC(), v)
		prev = v
	}
	return bl.Series()
}

// readGroup runs every query over the window for the group's targets, cfg.Parallel at a
// time; each query fills one builder of each target, so the queries never share one.
func (c *client) readGroup(ctx context.Context, cfg *Config, res *Result, sel string, g group) ([]*build, error) {
	builds := make([]*build, len(g))
	byFP := make(map[model.Fingerprint]*build, len(g))
	for i, l := range g {
		builds[i] = newBuild(l)
		byFP[l.fingerprint()] = builds[i]
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := v1.Range{Start: res.Start, End: res.End, Step: res.Step}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, cfg.Parallel)
	for _, q := range queries {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			expr := q.promql(sel)
			m, warn, err := c.rangeQuery(ctx, expr, r)
			mu.Lock()
			defer mu.Unlock()
			res.Queries++
			res.addWarnings(warn)
			if err != nil {
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				return
			}
			fill(q, m, byFP, res.Start, res.End, res.Step)
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = c.explain("range queries", ctx.Err())
	}
	return builds, firstErr
}

// rangeQuery runs a range query that must return a matrix.
func (c *client) rangeQuery(ctx context.Context, q string, r v1.Range) (model.Matrix, v1.Warnings, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.log.Debug("prometheus range query", "query", q, "start", r.Start, "end", r.End, "step", r.Step)
	val, warn, err := c.api.QueryRange(ctx, q, r, v1.WithTimeout(c.timeout))
	if err != nil {
		return nil, warn, c.explain("range query "+q, err)
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, warn, fmt.Errorf("%s: range query %s: want a matrix, got a %s: is it a Prometheus-compatible API?", c.url, q, typeName(val))
	}
	return m, warn, nil
}

// fill adds a query's readings to the targets' grids. Series of targets outside the group,
// readings outside the window, and negative readings of quantities that cannot be negative
// are ignored (NaN counts as no reading; the builders drop infinities).
func fill(q query, m model.Matrix, byFP map[model.Fingerprint]*build, start, end time.Time, step time.Duration) {
	lo, hi := model.TimeFromUnixNano(start.UnixNano()), model.TimeFromUnixNano(end.UnixNano())
	stepMs := max(step.Milliseconds(), 1)
	var drop []model.LabelName
	if q.q == qInfo {
		drop = []model.LabelName{"version"}
	}
	for _, s := range m {
		if s == nil {
			continue
		}
		b := byFP[labelsOf(s.Metric, drop...).fingerprint()]
		if b == nil {
			continue
		}
		if q.q == qInfo {
			if n := len(s.Values); n > 0 && s.Values[n-1].Timestamp >= b.versionT {
				b.version, b.versionT = sanitize(string(s.Metric["version"])), s.Values[n-1].Timestamp
			}
			continue
		}
		if b.g[q.q] != nil {
			continue // one series per target and quantity: a second would interleave
		}
		var g *grid
		for _, p := range s.Values {
			v := float64(p.Value)
			if p.Timestamp < lo || p.Timestamp > hi || v < 0 && !q.q.signed() {
				continue
			}
			if g == nil {
				base := int64(p.Timestamp)
				g = &grid{base: base, step: stepMs, v: make([]float64, (int64(hi)-base)/stepMs+1)}
				for i := range g.v {
					g.v[i] = math.NaN()
				}
				b.g[q.q] = g
			}
			g.put(int64(p.Timestamp), v)
		}
	}
}

// queryOf returns the query of a quantity.
func queryOf(q quantity) query {
	for _, qq := range queries {
		if qq.q == q {
			return qq
		}
	}
	return query{q: q}
}
