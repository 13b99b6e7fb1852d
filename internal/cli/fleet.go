package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/source/promapi"
)

var fleetCmd = &command{
	name:    "fleet",
	args:    "--prometheus URL [flags]",
	summary: "triage every Go service Prometheus scrapes: leaks, GC pressure, ranked worst first",
	help: `Fleet reads the metrics that client_golang's default Go and process collectors publish
(go_goroutines, go_memstats_*, go_gc_duration_seconds, process_resident_memory_bytes,
process_cpu_seconds_total) from a Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir,
VictoriaMetrics), for every target that exports them over --window, and judges each target with
the same rules as a session: heap and goroutine leaks (on the floors of the heap in use and of
the goroutine count), runtime retention, memory growth, GC overhead, cost growth. It prints a
table ranked worst first (by the most severe finding, its confidence, the number of findings,
then resident memory), and for each flagged target the memdoctor watch command to run next,
to name the culprit code from its profiles. Queries are range queries, one per metric for all
targets, at the targets' scrape interval; a large fleet over a long window is read a group of
targets at a time so that memory stays bounded.

What the standard metrics cannot show is listed as not judged: the GC's CPU time (unless the
service exposes runtime/metrics' /cpu/classes/gc/ through
collectors.WithGoCollectorRuntimeMetrics), memory outside Go, profiles, and a memory budget
(unless --memory-budget). TLS uses the system's roots (SSL_CERT_FILE adds a CA).`,
	examples: []string{
		"memdoctor fleet --prometheus http://prometheus:9090",
		`memdoctor fleet --prometheus https://thanos.example.com --selector 'job=~"api|web",env="prod"' --window 6h --json fleet.json`,
		"memdoctor fleet --prometheus https://mimir.example.com/prometheus --header 'X-Scope-OrgID: team-a' --bearer-token-file /run/secrets/token",
		"memdoctor fleet --prometheus http://prometheus:9090 --end 2026-11-20T03:00:00Z --window 2h --fail-on warning",
	},
}

func init() { fleetCmd.run = runFleet }

// headerFlag collects repeated --header NAME: VALUE flags.
type headerFlag struct{ h http.Header }

func (f *headerFlag) String() string { return "" }

func (f *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("header %q: want NAME: VALUE, e.g. 'X-Scope-OrgID: team-a'", s)
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, value)
	return nil
}

// fleetFlags are fleet's flags.
type fleetFlags struct {
	url, selector, end       string
	window, step, timeout    time.Duration
	json, failOn             string
	budget                   sizeFlag
	token, tokenFile         string
	basicAuth, basicAuthFile string
	headers                  headerFlag
	maxTargets               int
}

func runFleet(ctx context.Context, e *env, args []string) error {
	var f fleetFlags
	cfg, err := parseFleet(e, &f, args)
	if err != nil {
		return err
	}
	var rows []fleetRow
	res, err := promapi.Read(ctx, cfg, func(t promapi.Target) error {
		d := diagnose.Diagnose(t.Evidence, diagnose.Options{})
		rows = append(rows, newFleetRow(t.Labels, d, uint64(t.Evidence.HeapInUse.Last().V)))
		return nil
	})
	if err != nil {
		return err
	}
	rankFleet(rows)
	text := e.stdout
	if f.json == "-" {
		text = e.stderr
	}
	printFleet(text, res, rows)
	if f.json != "" {
		if err := writeFleetJSON(e, f.json, res, rows); err != nil {
			return err
		}
	}
	return fleetFailOn(rows, f.failOn)
}

// parseFleet parses fleet's flags into f and returns the reader's configuration.
func parseFleet(e *env, f *fleetFlags, args []string) (promapi.Config, error) {
	fs := newFlags(fleetCmd, e)
	fs.StringVar(&f.url, "prometheus", "", "base `URL` of the Prometheus-compatible API (http://prometheus:9090, https://mimir.example.com/prometheus)")
	fs.StringVar(&f.selector, "selector", "", "label matchers (`SEL`) that pick the targets, e.g. 'job=\"api\",env=\"prod\"' (default: every target exporting go_goroutines)")
	fs.DurationVar(&f.window, "window", promapi.DefaultWindow, "how far back to read")
	fs.StringVar(&f.end, "end", "", "end of the window: a `TIME`, RFC 3339 or Unix seconds (default: now)")
	fs.DurationVar(&f.step, "step", 0, "time between readings (default: the targets' scrape interval, else 15s)")
	fs.StringVar(&f.json, "json", "", "also write the verdicts as JSON (memdoctor/fleet/v1) to `FILE` (- for stdout; the table then goes to stderr)")
	fs.StringVar(&f.failOn, "fail-on", "", "exit with status 3 when a target has a finding of this `SEVERITY` or above: warning or critical")
	fs.Var(&f.budget, "memory-budget", "the memory (`SIZE`) each service may use, e.g. 2GiB (default: unknown; the metrics carry no limit)")
	fs.StringVar(&f.token, "bearer-token", "", "bearer `TOKEN` for the API (default: $MEMDOCTOR_PROMETHEUS_TOKEN)")
	fs.StringVar(&f.tokenFile, "bearer-token-file", "", "read the bearer token from `FILE`")
	fs.StringVar(&f.basicAuth, "basic-auth", "", "basic auth as `USER:PASSWORD` (default: $MEMDOCTOR_PROMETHEUS_BASIC_AUTH)")
	fs.StringVar(&f.basicAuthFile, "basic-auth-file", "", "read basic auth USER:PASSWORD from `FILE`")
	fs.Var(&f.headers, "header", "add an HTTP header to every request, as `'NAME: VALUE'` (repeatable; e.g. a tenant: 'X-Scope-OrgID: team-a')")
	fs.IntVar(&f.maxTargets, "max-targets", promapi.DefaultMaxTargets, "refuse a selector that matches more than `N` targets")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "time allowed for each request to the API")
	pos, err := parse(fleetCmd, e, fs, args, true)
	if err != nil {
		return promapi.Config{}, err
	}
	if len(pos) != 0 {
		return promapi.Config{}, usagef("fleet: unexpected argument %q: the API's URL goes in --prometheus", pos[0])
	}
	return f.config(e)
}

// config checks the flags and turns them into the reader's configuration.
func (f *fleetFlags) config(e *env) (promapi.Config, error) {
	cfg := promapi.Config{
		URL: f.url, Window: f.window, Step: f.step, MaxTargets: f.maxTargets, Timeout: f.timeout,
		MemoryBudgetBytes: f.budget.bytes, Logger: e.log,
	}
	switch {
	case f.url == "":
		return cfg, usagef("fleet: --prometheus URL is required, e.g. memdoctor fleet --prometheus http://prometheus:9090")
	case f.window <= 0:
		return cfg, usagef("--window %s: must be positive", f.window)
	case f.step < 0:
		return cfg, usagef("--step %s: must not be negative", f.step)
	case f.step > 0 && f.step < time.Second:
		return cfg, usagef("--step %s: must be at least 1s", f.step)
	case f.timeout <= 0:
		return cfg, usagef("--timeout %s: must be positive", f.timeout)
	case f.maxTargets <= 0:
		return cfg, usagef("--max-targets %d: must be positive", f.maxTargets)
	}
	if f.failOn != "" {
		if sev, ok := diagnose.ParseSeverity(f.failOn); !ok || sev == diagnose.Info {
			return cfg, usagef("--fail-on %q: want warning or critical", f.failOn)
		}
	}
	sel, err := promapi.NormalizeSelector(f.selector)
	if err != nil {
		return cfg, usagef("--selector: %v", err)
	}
	cfg.Selector = sel
	if f.end != "" {
		t, err := parseTime(f.end)
		if err != nil {
			return cfg, usagef("--end %q: want RFC 3339 (2026-11-20T03:00:00Z) or Unix seconds", f.end)
		}
		cfg.End = t
	}
	cfg.Auth, err = f.auth(e)
	return cfg, err
}

// auth reads the credentials from the flags, their files, or the environment.
func (f *fleetFlags) auth(e *env) (promapi.Auth, error) {
	a := promapi.Auth{Headers: f.headers.h}
	token, basic := f.token, f.basicAuth
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return a, fmt.Errorf("--bearer-token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if f.basicAuthFile != "" {
		b, err := os.ReadFile(f.basicAuthFile)
		if err != nil {
			return a, fmt.Errorf("--basic-auth-file: %w", err)
		}
		basic = strings.TrimSpace(string(b))
	}
	if token == "" && basic == "" {
		token, basic = e.getenv("MEMDOCTOR_PROMETHEUS_TOKEN"), e.getenv("MEMDOCTOR_PROMETHEUS_BASIC_AUTH")
	}
	if token != "" && basic != "" {
		return a, usagef("fleet: give a bearer token or basic auth, not both")
	}
	a.BearerToken = token
	if basic != "" {
		user, pass, ok := strings.Cut(basic, ":")
		if !ok || user == "" {
			return a, usagef("--basic-auth: want USER:PASSWORD")
		}
		a.Username, a.Password = user, pass
	}
	return a, nil
}

// parseTime parses RFC 3339 or Unix seconds.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v > 1e11 {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return time.UnixMilli(int64(v * 1000)), nil
}

// fleetRow is one target's verdict.
type fleetRow struct {
	labels    promapi.Labels
	name      string
	d         *diagnose.Diagnosis
	watch     string // the base URL for memdoctor watch ("" when the instance is not an address)
	watchNote string
	heapInUse uint64 // the last reading of the heap in use (live and garbage)
}

func newFleetRow(l promapi.Labels, d *diagnose.Diagnosis, heapInUse uint64) fleetRow {
	r := fleetRow{labels: l, name: l.Name(), d: d, heapInUse: heapInUse}
	if u, ok, why := l.WatchURL(); ok {
		r.watch = u
	} else {
		r.watchNote = why
	}
	// Only the verdict is kept: the evidence it was made from is dropped with the group.
	d.Breakdown = diagnose.Breakdown{}
	return r
}

// worst returns the most severe finding (findings come sorted by severity, then confidence).
func (r *fleetRow) worst() *diagnose.Finding {
	if len(r.d.Findings) == 0 {
		return nil
	}
	return &r.d.Findings[0]
}

// rankFleet sorts the rows worst first: the most severe finding, its confidence, the number
// of findings, then resident memory (the most at stake), then the name.
func rankFleet(rows []fleetRow) {
	key := func(r *fleetRow) (sev, conf int) {
		if w := r.worst(); w != nil {
			sev = w.Severity.Rank()
			if w.Confidence == diagnose.Confirmed {
				conf = 1
			}
		}
		return sev, conf
	}
	slices.SortStableFunc(rows, func(a, b fleetRow) int {
		as, ac := key(&a)
		bs, bc := key(&b)
		return cmp.Or(cmp.Compare(bs, as), cmp.Compare(bc, ac), cmp.Compare(len(b.d.Findings), len(a.d.Findings)),
			cmp.Compare(b.d.Summary.RSSPeakBytes, a.d.Summary.RSSPeakBytes), cmp.Compare(a.name, b.name))
	})
}

// watchCommand is the memdoctor watch command to run next on a flagged target.
func watchCommand(u string) string {
	return "memdoctor watch --until-confirmed --duration 15m " + u
}

// printFleet prints the ranked table, the flagged targets with their findings and the next
// command, and what could not be judged.
func printFleet(w io.Writer, res *promapi.Result, rows []fleetRow) {
	sel := res.Selector
	if sel == "" {
		sel = "every target"
	}
	fmt.Fprintf(w, "memdoctor fleet · %s · %s · %d target(s)\n", res.URL, sel, len(rows))
	fmt.Fprintf(w, "window %s → %s (%s), a reading every %s (%s); %d queries\n\n", res.Start.UTC().Format("2006-01-02 15:04:05"),
		res.End.UTC().Format("2006-01-02 15:04:05 UTC"), fmtDuration(res.End.Sub(res.Start)), fmtDuration(res.Step), res.StepSource, res.Queries)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tSEVERITY\tTARGET\tFINDINGS\tRSS\tHEAP IN USE\tGOROUTINES")
	for i, r := range rows {
		sev, kinds := "-", "none found"
		if wf := r.worst(); wf != nil {
			sev = string(wf.Severity)
			if wf.Confidence == diagnose.Suspected {
				sev += "?"
			}
			var ks []string
			for _, f := range r.d.Findings {
				ks = append(ks, string(f.Kind))
			}
			kinds = strings.Join(ks, ", ")
		}
		s := r.d.Summary
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\n", i+1, sev, r.name, kinds, bytesOrDash(s.RSSLatestBytes),
			bytesOrDash(r.heapInUse), s.GoroutinesLatest)
	}
	tw.Flush()
	printFlagged(w, rows)
	printNotJudged(w, rows)
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "\nthe server warned: %s\n", warn)
	}
}

func bytesOrDash(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmtBytes(b)
}

var fmtDuration = report.Duration

func printFlagged(w io.Writer, rows []fleetRow) {
	first := true
	for i, r := range rows {
		if len(r.d.Findings) == 0 {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nFlagged, worst first:\n")
			first = false
		}
		fmt.Fprintf(w, "\n%d. %s\n", i+1, r.name)
		for _, f := range r.d.Findings {
			fmt.Fprintf(w, "   %-8s %s (%s): %s\n", f.Severity, f.Kind, f.Confidence, f.Title)
		}
		if r.watch != "" {
			fmt.Fprintf(w, "   next: %s\n", watchCommand(r.watch))
		} else {
			fmt.Fprintf(w, "   next: memdoctor watch on the service's pprof address (%s)\n", r.watchNote)
		}
	}
	if !first {
		fmt.Fprintf(w, "\nwatch reads the service's net/http/pprof (or memdoctor agent) endpoints: this assumes they are served where its metrics are.\n")
	}
}

// printNotJudged says, once per finding kind, what could not be judged and on how many
// targets, with the most common reason.
func printNotJudged(w io.Writer, rows []fleetRow) {
	type why struct {
		targets int
		reasons map[string]int
	}
	byKind := map[diagnose.Kind]*why{}
	for _, r := range rows {
		for _, nj := range r.d.NotJudged {
			k := byKind[nj.Kind]
			if k == nil {
				k = &why{reasons: map[string]int{}}
				byKind[nj.Kind] = k
			}
			k.targets++
			k.reasons[nj.Reason]++
		}
	}
	if len(byKind) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNot judged:\n")
	for _, kind := range diagnose.Kinds {
		k := byKind[kind]
		if k == nil {
			continue
		}
		var top string
		for reason, n := range k.reasons {
			if n > k.reasons[top] || n == k.reasons[top] && reason < top {
				top = reason
			}
		}
		fmt.Fprintf(w, "  %s on %d of %d target(s): %s\n", kind, k.targets, len(rows), top)
	}
}

// FleetSchema identifies fleet's JSON.
const FleetSchema = "memdoctor/fleet/v1"

type fleetJSON struct {
	Schema     string            `json:"schema"`
	Generated  time.Time         `json:"generated"`
	Prometheus string            `json:"prometheus"`
	Selector   string            `json:"selector,omitempty"`
	Window     fleetWindowJSON   `json:"window"`
	Targets    []fleetTargetJSON `json:"targets"`
	Warnings   []string          `json:"warnings,omitempty"`
}

type fleetWindowJSON struct {
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Seconds     float64   `json:"seconds"`
	StepSeconds float64   `json:"step_seconds"`
	StepSource  string    `json:"step_source"`
}

type fleetTargetJSON struct {
	Rank      int                  `json:"rank"`
	Name      string               `json:"name"`
	Labels    map[string]string    `json:"labels"`
	Severity  diagnose.Severity    `json:"severity,omitempty"`
	Watch     string               `json:"watch,omitempty"`
	WatchNote string               `json:"watch_note,omitempty"`
	Window    diagnose.Window      `json:"target_window"`
	Summary   diagnose.Summary     `json:"summary"`
	Findings  []diagnose.Finding   `json:"findings"`
	NotJudged []diagnose.NotJudged `json:"not_judged"`
	Notes     []string             `json:"notes,omitempty"`
}

func writeFleetJSON(e *env, path string, res *promapi.Result, rows []fleetRow) error {
	doc := fleetJSON{
		Schema: FleetSchema, Generated: time.Now().UTC(), Prometheus: res.URL, Selector: res.Selector,
		Window: fleetWindowJSON{Start: res.Start.UTC(), End: res.End.UTC(), Seconds: res.End.Sub(res.Start).Seconds(),
			StepSeconds: res.Step.Seconds(), StepSource: res.StepSource},
		Targets: make([]fleetTargetJSON, 0, len(rows)), Warnings: res.Warnings,
	}
	for i, r := range rows {
		t := fleetTargetJSON{
			Rank: i + 1, Name: r.name, Labels: r.labels, Severity: r.d.MaxSeverity(), WatchNote: r.watchNote,
			Window: r.d.Window, Summary: r.d.Summary, Findings: r.d.Findings, NotJudged: r.d.NotJudged, Notes: r.d.Notes,
		}
		if t.NotJudged == nil {
			t.NotJudged = []diagnose.NotJudged{}
		}
		if len(r.d.Findings) > 0 && r.watch != "" {
			t.Watch = watchCommand(r.watch)
		}
		doc.Targets = append(doc.Targets, t)
	}
	if path == "-" {
		return encodeIndented(e.stdout, doc)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	if err := encodeIndented(f, doc); err != nil {
		f.Close()
		return fmt.Errorf("--json %s: %w", path, err)
	}
	return f.Close()
}

func encodeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// fleetFailOn returns errFailOn when a target has a finding at level or above.
func fleetFailOn(rows []fleetRow, level string) error {
	if level == "" {
		return nil
	}
	sev, _ := diagnose.ParseSeverity(level)
	for _, r := range rows {
		if r.d.MaxSeverity().Rank() >= sev.Rank() {
			return errFailOn
		}
	}
	return nil
}
