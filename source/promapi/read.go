package promapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/memdoctor/memdoctor/evidence"
)

// Config says what to read, and from where.
type Config struct {
	// URL is the API's base (http://prometheus:9090, or a path prefix for Thanos or Mimir).
	URL string
	// Selector picks the targets: label matchers such as job="api" (see NormalizeSelector).
	Selector string
	// Window is how far back to read (default 1h), up to End (default now).
	Window time.Duration
	End    time.Time
	// Step is the time between readings (0 = the targets' scrape interval, else 15 s). It is
	// raised when a series would have more than MaxPointsPerSeries readings.
	Step time.Duration
	Auth Auth
	// MaxTargets refuses a selector that matches more targets (0 = 1000).
	MaxTargets int
	// MaxResponseBytes bounds each response's body (0 = DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// Timeout bounds each request (0 = 1 min).
	Timeout time.Duration
	// Parallel is how many queries may be in flight at once (0 = 4).
	Parallel int
	// MaxReadings bounds the readings held at once across a group of targets (0 = 2,000,000,
	// about 100 MB): a large fleet over a long window is read a group of targets at a time.
	MaxReadings int
	// MemoryBudgetBytes is every target's memory budget (0 = unknown).
	MemoryBudgetBytes uint64
	// Logger receives debug messages; nil = discard.
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultWindow      = time.Hour
	DefaultStep        = 15 * time.Second
	DefaultMaxTargets  = 1000
	DefaultMaxReadings = 2_000_000
	// MaxPointsPerSeries bounds a series' readings: the evidence keeps about this many
	// without reducing them.
	MaxPointsPerSeries = 4000
)

// Target is one Prometheus target (a job and instance: its Labels) and its evidence, ready
// for diagnose.Diagnose; what is known of the service is the evidence's Target.
type Target struct {
	Labels   Labels
	Evidence *evidence.Evidence
}

// Result describes what was read.
type Result struct {
	URL        string
	Selector   string // as sent, with braces ("" = every target)
	Start, End time.Time
	Step       time.Duration
	// StepSource says where the step came from: "flag", "scrape interval", "default", with
	// ", raised to bound the readings" when it was.
	StepSource string
	Targets    int
	Groups     int
	Queries    int
	// Warnings are the server's (a partial response from Thanos, say), once each.
	Warnings []string
}

func (c *Config) defaults() {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.End.IsZero() {
		c.End = time.Now()
	}
	c.End = c.End.Truncate(time.Millisecond)
	if c.MaxTargets <= 0 {
		c.MaxTargets = DefaultMaxTargets
	}
	if c.Timeout <= 0 {
		c.Timeout = time.Minute
	}
	if c.Parallel <= 0 {
		c.Parallel = 4
	}
	if c.MaxReadings <= 0 {
		c.MaxReadings = DefaultMaxReadings
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// ErrNoTargets is returned when no target matches.
var ErrNoTargets = errors.New("no target exports the standard Go metrics")

// Read finds the targets that export client_golang's Go collector in the window, reads
// their metrics, and calls fn with each target's evidence, a group of targets at a time, in
// the order of their labels. fn should keep what it derives from the evidence, not the
// evidence itself, so that memory stays bounded by one group. A failing query stops the
// read, as does an error from fn.
func Read(ctx context.Context, cfg Config, fn func(Target) error) (*Result, error) {
	cfg.defaults()
	sel, err := NormalizeSelector(cfg.Selector)
	if err != nil {
		return nil, err
	}
	c, err := newClient(cfg.URL, cfg.Auth, cfg.MaxResponseBytes, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	c.log = cfg.Logger
	res := &Result{URL: c.url, Selector: selector(sel), Start: cfg.End.Add(-cfg.Window), End: cfg.End}
	targets, err := c.discover(ctx, &cfg, res, sel)
	if err != nil {
		return nil, err
	}
	res.Targets = len(targets)
	if err := c.chooseStep(ctx, &cfg, res, sel, targets); err != nil {
		return nil, err
	}
	labels := make([]Labels, len(targets))
	for i, t := range targets {
		labels[i] = t.labels
	}
	groups := groupTargets(labels, groupSize(&cfg, res))
	res.Groups = len(groups)
	for _, g := range groups {
		gsel := sel
		if len(groups) > 1 {
			gsel = joinMatchers(sel, g.matchers())
		}
		builds, err := c.readGroup(ctx, &cfg, res, selector(gsel), g)
		if err != nil {
			return res, err
		}
		for i, b := range builds {
			builds[i] = nil // its readings go once its evidence is built
			if err := fn(Target{Labels: b.labels, Evidence: b.evidence(&cfg)}); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// discover lists the targets exporting go_goroutines in the window: an instant query at its
// end counts each one's readings, and keeps each target's labels (all but the metric name).
func (c *client) discover(ctx context.Context, cfg *Config, res *Result, sel string) ([]discovered, error) {
	q := fmt.Sprintf("count_over_time(go_goroutines%s[%s])", selector(sel), model.Duration(cfg.Window))
	vec, err := c.instant(ctx, res, q, cfg.End)
	if err != nil {
		return nil, err
	}
	seen := make(map[model.Fingerprint]bool, len(vec))
	var out []discovered
	for _, s := range vec {
		if s == nil {
			continue
		}
		l := labelsOf(s.Metric)
		fp := l.fingerprint()
		if seen[fp] {
			continue
		}
		seen[fp] = true
		out = append(out, discovered{l, float64(s.Value)})
		if len(out) > cfg.MaxTargets {
			return nil, fmt.Errorf("%s: more than %d targets match %s: narrow --selector or raise --max-targets", c.url, cfg.MaxTargets, orAll(res.Selector))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w (go_goroutines%s) between %s and %s: check --selector and --window, and that the services register client_golang's Go collector", c.url, ErrNoTargets,
			res.Selector, res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339))
	}
	slices.SortFunc(out, func(a, b discovered) int {
		return cmp.Or(cmp.Compare(a.labels["job"], b.labels["job"]), cmp.Compare(a.labels["instance"], b.labels["instance"]),
			cmp.Compare(a.labels.String(), b.labels.String()))
	})
	return out, nil
}

// discovered is a target found, with its count of go_goroutines readings in the window.
type discovered struct {
	labels   Labels
	readings float64
}

func orAll(sel string) string {
	if sel == "" {
		return "(no selector)"
	}
	return sel
}

// chooseStep sets the step: the flag's, else the targets' scrape interval (the median time
// between the raw readings of go_goroutines of the targets read longest), else the default;
// raised so that no series has more than MaxPointsPerSeries readings.
func (c *client) chooseStep(ctx context.Context, cfg *Config, res *Result, sel string, targets []discovered) error {
	step, src := cfg.Step, "flag"
	if step <= 0 {
		step, src = DefaultStep, "default"
		if iv, err := c.scrapeInterval(ctx, cfg, res, sel, targets); err != nil {
			return err
		} else if iv > 0 {
			step, src = min(max(iv.Round(time.Second), time.Second), 5*time.Minute), "scrape interval"
		}
	}
	if least := cfg.Window / MaxPointsPerSeries; step < least {
		step = least.Round(time.Second)
		if step < least {
			step += time.Second
		}
		src += ", raised to bound the readings"
	}
	res.Step, res.StepSource = step, src
	return nil
}

// scrapeInterval is the median time between the raw readings of go_goroutines of the (at
// most three) targets with the most readings, over the last five minutes of the window (0
// when there are too few).
func (c *client) scrapeInterval(ctx context.Context, cfg *Config, res *Result, sel string, targets []discovered) (time.Duration, error) {
	top := slices.Clone(targets)
	slices.SortStableFunc(top, func(a, b discovered) int { return cmp.Compare(b.readings, a.readings) })
	var g group
	for _, t := range top[:min(3, len(top))] {
		g = append(g, t.labels)
	}
	look := min(cfg.Window, 5*time.Minute)
	q := fmt.Sprintf("go_goroutines%s[%s]", selector(joinMatchers(sel, g.matchers())), model.Duration(look))
	val, err := c.query(ctx, res, q, cfg.End)
	if err != nil {
		return 0, err
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return 0, fmt.Errorf("%s: query %s: want a matrix, got a %s: is it a Prometheus-compatible API?", c.url, q, typeName(val))
	}
	var gaps []time.Duration
	for _, s := range m {
		if s == nil {
			continue
		}
		for i := 1; i < len(s.Values); i++ {
			if d := s.Values[i].Timestamp.Sub(s.Values[i-1].Timestamp); d > 0 {
				gaps = append(gaps, d)
			}
		}
	}
	if len(gaps) < 2 {
		return 0, nil
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2], nil
}

// groupSize is how many targets are read together: all of them unless their readings would
// pass MaxReadings.
func groupSize(cfg *Config, res *Result) int {
	points := int(cfg.Window/res.Step) + 1
	return max(1, cfg.MaxReadings/(points*held()))
}

// query runs an instant query.
func (c *client) query(ctx context.Context, res *Result, q string, at time.Time) (model.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.log.Debug("prometheus query", "query", q, "time", at)
	res.Queries++
	val, warn, err := c.api.Query(ctx, q, at, v1.WithTimeout(c.timeout))
	if err != nil {
		return nil, c.explain("query "+q, err)
	}
	res.addWarnings(warn)
	return val, nil
}

// instant runs an instant query that must return a vector.
func (c *client) instant(ctx context.Context, res *Result, q string, at time.Time) (model.Vector, error) {
	val, err := c.query(ctx, res, q, at)
	if err != nil {
		return nil, err
	}
	vec, ok := val.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: query %s: want a vector, got a %s: is it a Prometheus-compatible API?", c.url, q, typeName(val))
	}
	return vec, nil
}

func typeName(v model.Value) string {
	if v == nil {
		return "null"
	}
	return v.Type().String()
}

func (r *Result) addWarnings(ws v1.Warnings) {
	for _, w := range ws {
		w = firstLine(w)
		if len(r.Warnings) < 20 && !slices.Contains(r.Warnings, w) {
			r.Warnings = append(r.Warnings, w)
		}
	}
}
