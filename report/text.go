package report

import (
	"bufio"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/sanitize"
)

// TextOptions tune the terminal report.
type TextOptions struct {
	Color bool // ANSI colours (the caller honours NO_COLOR and checks for a terminal)
	// MaxCulprits per finding; 0 = 3.
	MaxCulprits int
}

// Text writes the terminal report: headline figures, where RSS goes, and the findings by
// severity with their culprits and advice.
func Text(w io.Writer, d *diagnose.Diagnosis, opts TextOptions) error {
	if opts.MaxCulprits == 0 {
		opts.MaxCulprits = 3
	}
	bw := bufio.NewWriter(w)
	p := &printer{w: bw, color: opts.Color}
	p.header(d)
	p.breakdown(d)
	p.snapshots(d)
	p.findings(d, opts.MaxCulprits)
	p.notJudged(d)
	p.notes(d)
	return bw.Flush()
}

type printer struct {
	w     *bufio.Writer
	color bool
}

const (
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiReset  = "\x1b[0m"
)

// clean is text fit for the terminal: memdoctor's own (colours, layout) around sanitized
// strings. The printer sanitizes every other string it is given: function and file names,
// labels, notes and titles come from profiles and targets, and may hold escape sequences.
type clean string

// paint sanitizes s and colours it.
func (p *printer) paint(code, s string) clean {
	s = sanitize.Text(s)
	if !p.color {
		return clean(s)
	}
	return clean(code + s + ansiReset)
}

// dim colours text that is clean already (wrapped lines: painting would escape their
// newlines).
func (p *printer) dim(c clean) clean {
	if !p.color {
		return c
	}
	return clean(ansiDim + string(c) + ansiReset)
}

// f prints like fmt.Fprintf, with every string argument but a clean one sanitized.
func (p *printer) f(format string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case clean:
			args[i] = string(v)
		case error:
			args[i] = sanitize.Text(v.Error())
		case fmt.Stringer:
			args[i] = sanitize.Text(v.String())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				args[i] = sanitize.Text(rv.String())
			}
		}
	}
	fmt.Fprintf(p.w, format, args...)
}

func (p *printer) header(d *diagnose.Diagnosis) {
	t := d.Target
	who := t.Name
	if who == "" {
		who = t.PprofURL
	}
	var bits []string
	if t.PID != 0 {
		bits = append(bits, fmt.Sprintf("pid %d", t.PID))
	}
	if t.GoVersion != "" {
		bits = append(bits, t.GoVersion)
	}
	id := who
	if len(bits) > 0 {
		id += " (" + strings.Join(bits, ", ") + ")"
	}
	p.f("%s  %s\n", p.paint(ansiBold, "memdoctor: "+id), windowLine(d))
	s := d.Summary
	var line []string
	switch {
	case s.RSSPeakSource == "high-water mark":
		when := "between samples"
		if s.RSSPeakBeforeWindow {
			when = "before the window"
		}
		line = append(line, fmt.Sprintf("RSS peak %s (the kernel's high-water mark, reached %s; sampled peak %s, end %s)",
			Bytes(s.RSSPeakBytes), when, Bytes(s.RSSSampledPeakBytes), Bytes(s.RSSLatestBytes)))
	case s.RSSPeakBytes > 0:
		line = append(line, fmt.Sprintf("RSS peak %s (p99 %s, end %s)", Bytes(s.RSSPeakBytes), Bytes(s.RSSP99Bytes), Bytes(s.RSSLatestBytes)))
	case d.Source == "profiles":
		line = append(line, "RSS unknown (profiles do not record it)")
	default:
		line = append(line, "RSS unknown (not on this machine)")
	}
	if s.TreeProcs > 1 {
		line = append(line, fmt.Sprintf("tree of %d processes peak %s", s.TreeProcs, Bytes(s.TreeRSSPeakBytes)))
	}
	if s.HeapLivePeakBytes > 0 {
		line = append(line, fmt.Sprintf("live heap peak %s (end %s)", Bytes(s.HeapLivePeakBytes), Bytes(s.HeapLiveLatestBytes)))
	}
	p.f("  %s\n", strings.Join(line, " · "))
	line = line[:0]
	if s.GCSource != "" {
		gc := fmt.Sprintf("GC %.2f/s (%d cycles), GC CPU %s", s.GCPerSecond, s.GCCount, Percent(s.GCCPUFraction))
		if s.GCAssistFraction > 0 {
			gc += fmt.Sprintf(" (%s in assists)", Percent(s.GCAssistFraction))
		}
		line = append(line, gc)
	}
	if s.AllocBytesPerSecond > 0 {
		line = append(line, fmt.Sprintf("alloc %s/s", Bytes(uint64(s.AllocBytesPerSecond))))
	}
	if s.GoroutinesPeak > 0 {
		line = append(line, fmt.Sprintf("goroutines peak %d", s.GoroutinesPeak))
	}
	if len(line) > 0 {
		p.f("  %s\n", strings.Join(line, " · "))
	}
	budget := "memory budget unknown (pass --memory-budget)"
	if s.MemoryBudgetBytes > 0 {
		budget = fmt.Sprintf("memory budget %s (%s)", Bytes(s.MemoryBudgetBytes), s.MemoryBudgetSource)
	}
	if d.Source == "profiles" { // no samples: say what the inputs were
		p.f("  %s · %d heap and %d goroutine profiles\n\n", budget, s.HeapProfiles, s.GoroutineProfiles)
		return
	}
	p.f("  %s · %d samples, %d heap and %d goroutine profiles\n\n", budget, s.Samples, s.HeapProfiles, s.GoroutineProfiles)
}

// windowLine says how long the window is and what it comes from.
func windowLine(d *diagnose.Diagnosis) string {
	span := Duration(time.Duration(d.Window.Seconds * float64(time.Second)))
	if d.Source == "profiles" {
		if d.Window.Seconds == 0 {
			return "one instant, from profiles"
		}
		return span + ", from profiles"
	}
	return span + ", " + sessionStatus(d.Target.Status)
}

func sessionStatus(s string) string {
	switch s {
	case "":
		return "session"
	case "running":
		return "session not finished (collector killed?)"
	}
	return "session " + s
}

func (p *printer) breakdown(d *diagnose.Diagnosis) {
	peak, latest := d.Breakdown.Peak, d.Breakdown.Latest
	if peak == nil {
		p.f("%s\n  no samples of the process's memory\n\n", p.paint(ansiBold, "Where RSS goes"))
		return
	}
	p.f("%s %s\n", p.paint(ansiBold, "Where RSS goes"),
		p.paint(ansiDim, fmt.Sprintf("(at the peak, %s, and at the end)", peak.Time.Local().Format("15:04:05"))))
	if peak.GoSource == "" {
		p.f("  no Go runtime figures (no pprof endpoint reached): only RSS is known\n")
	}
	pr, lr := peak.Rows(), latest.Rows()
	for i, r := range pr {
		if r.Bytes == 0 && lr[i].Bytes == 0 {
			continue
		}
		sign := " "
		if r.Minus {
			sign = "-"
		}
		p.f("  %s%-25s %10s %10s  %s\n", sign, r.Name, Bytes(r.Bytes), Bytes(lr[i].Bytes), p.paint(ansiDim, r.Explanation))
	}
	p.f("  %s %10s %10s\n", p.paint(ansiBold, fmt.Sprintf(" %-25s", "= RSS")), Bytes(peak.RSSBytes), Bytes(latest.RSSBytes))
	if peak.CgroupLimitBytes > 0 {
		p.f("   cgroup limit %s: RSS peak is %s of it\n", Bytes(peak.CgroupLimitBytes), Percent(peak.RSSOfCgroupLimit))
	}
	p.f("\n")
}

func (p *printer) findings(d *diagnose.Diagnosis, maxCulprits int) {
	fs := append([]diagnose.Finding(nil), d.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
	p.f("%s\n", p.paint(ansiBold, "Findings"))
	switch {
	case d.Healthy():
		p.f("  none: no memory problem found in this window\n")
		return
	case len(fs) == 0:
		p.f("  none among what could be judged (see below what could not)\n")
		return
	}
	for _, f := range fs {
		conf := clean("")
		if f.Confidence == diagnose.Suspected {
			conf = p.paint(ansiDim, " (suspected)")
		}
		p.f("  %s%s %s: %s\n", p.severity(f.Severity), conf, f.Kind, f.Title)
		if f.Snapshot {
			p.f("      %s\n", p.paint(ansiDim, "a snapshot, not a trend: a second profile taken minutes later confirms or dismisses it"))
		}
		if f.Confidence == diagnose.Suspected && f.WatchMoreSeconds > 0 {
			more := Duration(time.Duration(f.WatchMoreSeconds * float64(time.Second)))
			hint := fmt.Sprintf("not yet confirmed: watch about %s more (memdoctor watch --until-confirmed)", more)
			switch d.Source {
			case "profiles":
				hint = fmt.Sprintf("not yet confirmed: profiles covering about %s more would confirm or dismiss it", more)
			case "run", "demo": // the program is stopped: record it again, longer
				hint = fmt.Sprintf("not yet confirmed: a recording about %s longer would confirm or dismiss it (memdoctor %s --duration)", more, d.Source)
			}
			p.f("      %s\n", p.paint(ansiDim, hint))
		}
		if f.Detail != "" {
			p.f("%s\n", indentWrap(f.Detail, "      ", 92))
		}
		if len(f.Evidence) > 0 {
			p.f("%s\n", p.dim(indentWrapFirst(evidenceText(f.Evidence), "      evidence: ", "                ", 92)))
		}
		for i, c := range f.Culprits {
			if i == maxCulprits {
				p.f("      … %d more culprit(s) in the JSON report\n", len(f.Culprits)-i)
				break
			}
			p.f("      culprit: %s\n", culpritLine(c))
			if len(c.Stack) > 1 {
				p.f("%s\n", p.paint(ansiDim, "        "+stackLine(c.Stack, 4)))
			}
			if c.HeldBy != nil {
				for _, l := range c.HeldBy.Lines(maxHeldPaths) {
					p.f("        %s\n", clean(l)) // a path is one word: never wrapped
				}
			}
		}
		for _, a := range f.Advice {
			p.f("%s\n", indentWrapFirst(a, "      fix: ", "           ", 92))
		}
		if len(f.AdviceEnv) > 0 {
			keys := make([]string, 0, len(f.AdviceEnv))
			for k := range f.AdviceEnv {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+"="+f.AdviceEnv[k])
			}
			p.f("      env: %s\n", p.paint(ansiBold, strings.Join(kv, " ")))
		}
	}
}

// maxHeldPaths is how many of a culprit's reference paths the text shows (the JSON has them
// all).
const maxHeldPaths = 3

func (p *printer) severity(s diagnose.Severity) clean {
	label := strings.ToUpper(string(s))
	switch s {
	case diagnose.Critical:
		return p.paint(ansiBold+ansiRed, label)
	case diagnose.Warning:
		return p.paint(ansiYellow, label)
	}
	return p.paint(ansiCyan, label)
}

func culpritLine(c diagnose.Culprit) string {
	s := c.Function
	if c.File != "" {
		s += fmt.Sprintf("  %s:%d", shortFile(c.File), c.Line)
	}
	switch {
	case c.Bytes != 0:
		s += fmt.Sprintf("  %s", SignedBytes(c.Bytes))
	case c.Count != 0:
		s += fmt.Sprintf("  %+d", c.Count)
	}
	if c.Share > 0 {
		s += fmt.Sprintf(" (%s)", Percent(c.Share))
	}
	if c.Sites > 0 {
		s += fmt.Sprintf(" under it, at %d sites", c.Sites)
	}
	return s
}

// shortFile keeps the last two elements of a path.
func shortFile(f string) string {
	parts := strings.Split(f, "/")
	if len(parts) > 2 {
		return strings.Join(parts[len(parts)-2:], "/")
	}
	return f
}

// stackLine shows the first frames of a stack, leaf first: "io.ReadAll <- main.handle <- …".
func stackLine(stack []string, n int) string {
	s := stack
	if len(s) > n {
		s = s[:n]
	}
	out := strings.Join(s, " <- ")
	if len(stack) > n {
		out += " <- …"
	}
	return out
}

// notJudged says what could not be judged and why: nothing unseen is reported as healthy.
func (p *printer) notJudged(d *diagnose.Diagnosis) {
	if len(d.NotJudged) == 0 {
		return
	}
	p.f("\n%s\n", p.paint(ansiBold, "Not judged"))
	for _, n := range d.NotJudged {
		line := string(n.Kind) + ": " + n.Reason
		if n.WatchMoreSeconds > 0 {
			more := Duration(time.Duration(n.WatchMoreSeconds * float64(time.Second)))
			if d.Source == "profiles" {
				line += fmt.Sprintf(" (about %s more of data)", more)
			} else {
				line += fmt.Sprintf(" (watch about %s more)", more)
			}
		}
		p.f("%s\n", indentWrapFirst(line, "  - ", "    ", 92))
	}
}

func (p *printer) notes(d *diagnose.Diagnosis) {
	if len(d.Notes) == 0 {
		return
	}
	p.f("\n%s\n", p.paint(ansiBold, "Notes"))
	for _, n := range d.Notes {
		p.f("%s\n", indentWrapFirst(n, "  - ", "    ", 92))
	}
}

func indentWrap(s, prefix string, width int) clean {
	return indentWrapFirst(s, prefix, prefix, width)
}

// indentWrapFirst wraps s's words (sanitized) at width, the first line after first, the
// others after rest.
func indentWrapFirst(s, first, rest string, width int) clean {
	var b strings.Builder
	b.WriteString(first)
	n := len(first)
	start := true
	for _, w := range strings.Fields(s) {
		w = sanitize.Text(w)
		if !start && n+1+len(w) > width {
			b.WriteString("\n" + rest)
			n = len(rest)
			start = true
		}
		if !start {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
		start = false
	}
	return clean(b.String())
}
