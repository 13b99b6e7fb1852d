package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// cardView is a finding as its card shows it.
type cardView struct {
	N                         int
	Kind, Severity, Title     string
	Detail, When              string
	Evidence                  []evidenceRow
	Culprits                  []culpritView
	Advice                    []string
	Env                       string
	Commands                  []string
	CommandsNote              string
	HasFlame                  bool
	FlameNote                 string
	PprofURL, PprofSampleType string // memdoctor serve only
}

// culpritView is one culprit line of a card.
type culpritView struct {
	Function, Where, File, Amount string
	Own                           bool
	Stack                         []string
	// Held is who keeps the culprit's objects alive (a heap leak's, when its heap was read):
	// one line per reference path.
	Held []string
}

// findings returns the cards and the timeline marks of the diagnosis' findings, most severe
// first (the order of the text report).
func (b *builder) findings() ([]cardView, []FindingMark) {
	fs := append([]diagnose.Finding(nil), b.d.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity.Rank() > fs[j].Severity.Rank() })
	cards := make([]cardView, 0, len(fs))
	marks := make([]FindingMark, 0, len(fs))
	for i, f := range fs {
		card, mark := b.finding(i+1, f)
		cards = append(cards, card)
		marks = append(marks, mark)
	}
	return cards, marks
}

func (b *builder) finding(n int, f diagnose.Finding) (cardView, FindingMark) {
	c := cardView{
		N: n, Kind: string(f.Kind), Severity: string(f.Severity), Title: f.Title, Detail: f.Detail,
		When: b.clock.span(f.Start, f.End), Evidence: evidenceRows(f.Evidence), Advice: f.Advice,
	}
	m := FindingMark{N: n, Kind: string(f.Kind), Severity: string(f.Severity)}
	if !f.Start.IsZero() {
		s := f.Start.Sub(b.t0).Seconds()
		m.Start = &s
		e := s
		if !f.End.IsZero() {
			e = f.End.Sub(b.t0).Seconds()
		}
		m.End = &e
	}
	for _, cu := range f.Culprits {
		c.Culprits = append(c.Culprits, culpritOf(cu))
	}
	if len(f.AdviceEnv) > 0 {
		keys := make([]string, 0, len(f.AdviceEnv))
		for k := range f.AdviceEnv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		kv := make([]string, len(keys))
		for i, k := range keys {
			kv[i] = k + "=" + shellQuote(f.AdviceEnv[k])
		}
		c.Env = strings.Join(kv, " ")
	}
	pr, named := b.snaps.named(f)
	around, hasAround := b.snaps.around(f)
	cmdPair := pr
	switch {
	case named:
	case hasAround:
		cmdPair = around
		c.CommandsNote = "The finding names no snapshots; these are the two around it."
	}
	if named || hasAround {
		si := sampleIndex(f.Kind, cmdPair.kind)
		c.Commands = pprofCommands(cmdPair, si)
		if cmdPair.oldID >= 0 && cmdPair.newID >= 0 {
			m.Pair = []int{cmdPair.oldID, cmdPair.newID}
			m.SampleIndex = si
			if b.opts.Serve {
				c.PprofURL = fmt.Sprintf("pprof/diff/%d/%d/", cmdPair.oldID, cmdPair.newID)
				c.PprofSampleType = si
			}
		}
	}
	m.Flame, c.FlameNote = b.flame(f, pr, named, around, hasAround)
	c.HasFlame = m.Flame != nil
	return c, m
}

func culpritOf(cu diagnose.Culprit) culpritView {
	v := culpritView{Function: cu.Function, File: cu.File, Own: cu.Own, Stack: cu.Stack}
	if cu.HeldBy != nil {
		v.Held = cu.HeldBy.Lines(0)
	}
	if cu.File != "" {
		v.Where = fmt.Sprintf("%s:%d", shortFile(cu.File), cu.Line)
	}
	switch {
	case cu.Bytes != 0:
		v.Amount = SignedBytes(cu.Bytes)
	case cu.Count != 0:
		v.Amount = fmt.Sprintf("%+d", cu.Count)
	}
	if cu.Share > 0 {
		if v.Amount != "" {
			v.Amount += " "
		}
		v.Amount += "(" + Percent(cu.Share) + ")"
	}
	if cu.Sites > 0 {
		v.Amount += fmt.Sprintf(" under it, at %d sites", cu.Sites)
	}
	return v
}

// pprofCommands are the commands to dig into a pair: pprof's web UI on the difference, and
// memdoctor's own diff in the terminal.
func pprofCommands(p pair, sampleIndex string) []string {
	args := []string{"go", "tool", "pprof", "-http=:"}
	if sampleIndex != "" {
		args = append(args, "-sample_index="+sampleIndex)
	}
	cmds := []string{shellCommand(cmdWidth, append(args, "-diff_base="+shellQuote(p.old), shellQuote(p.new))...)}
	if p.kind == session.KindHeap && sampleIndex != "" {
		cmds = append(cmds, shellCommand(cmdWidth, "memdoctor", "diff", "--type", sampleIndex, shellQuote(p.old), shellQuote(p.new)))
	}
	return cmds
}

// cmdWidth is where a command on the page breaks its line.
const cmdWidth = 72

// shellCommand joins args, each quoted already, into one command a POSIX shell runs as it is:
// an argument that would end past width goes on a line of its own after " \", so that a long
// command reads on a narrow page and still pastes whole.
func shellCommand(width int, args ...string) string {
	var b strings.Builder
	n := 0
	for i, a := range args {
		if i > 0 {
			if n+1+len(a) > width {
				b.WriteString(" \\\n    ")
				n = 4
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(a)
		n += len(a)
	}
	return b.String()
}

// flame builds a finding's icicle: from the snapshots it names, else from its culprits'
// stacks, else from the snapshots around it. The note says what the widths measure, or why
// there is no flame graph.
func (b *builder) flame(f diagnose.Finding, named pair, isNamed bool, around pair, hasAround bool) (*Flame, string) {
	if isNamed {
		fl, err := b.flameOfPair(f, named)
		if err == nil {
			return fl, b.flameTitle(fl, named)
		}
		if fc := flameCulprits(f.Culprits); fc != nil {
			fc.Title = "what the culprits account for"
			return fc, fmt.Sprintf("The snapshots could not be compared (%v); widths are what each culprit's stack accounts for.", err)
		}
		return nil, fmt.Sprintf("No flame graph: the snapshots could not be compared (%v).", err)
	}
	if fc := flameCulprits(f.Culprits); fc != nil {
		fc.Title = "what the culprits account for"
		return fc, "Widths are what each culprit's stack accounts for."
	}
	if hasAround {
		fl, err := b.flameOfPair(f, around)
		if err == nil {
			return fl, b.flameTitle(fl, around) + " (the snapshots around the finding: it names none)"
		}
		return nil, fmt.Sprintf("No flame graph: the snapshots around the finding could not be compared (%v).", err)
	}
	return nil, "No flame graph: the finding names no snapshots and the session has fewer than two to compare."
}

func (b *builder) flameOfPair(f diagnose.Finding, p pair) (*Flame, error) {
	old, err := b.readProfile(p.old)
	if err != nil {
		return nil, err
	}
	new, err := b.readProfile(p.new)
	if err != nil {
		return nil, err
	}
	fl, err := flameDiff(old, new, sampleIndex(f.Kind, p.kind), culprit.Options{MainModule: b.ev.Target.MainModule})
	if err != nil {
		return nil, err
	}
	typ := sampleIndex(f.Kind, p.kind)
	switch typ {
	case "alloc_space":
		fl.Title = "allocated between " + b.clock.at(p.oldT) + " and " + b.clock.at(p.newT) + " (alloc_space)"
	case "inuse_space":
		fl.Title = "growth of the heap held between " + b.clock.at(p.oldT) + " and " + b.clock.at(p.newT) + " (inuse_space)"
	default:
		fl.Title = "goroutines added between " + b.clock.at(p.oldT) + " and " + b.clock.at(p.newT)
	}
	return fl, nil
}

func (b *builder) flameTitle(fl *Flame, p pair) string {
	total := fmt.Sprint(fl.Total)
	if fl.Unit == "bytes" {
		total = Bytes(uint64(fl.Total))
	}
	s := fmt.Sprintf("Widths: %s, %s in all, by stack (root at the top). Click a frame to zoom in.", fl.Title, total)
	if fl.Shrank > 0 {
		shr := fmt.Sprint(fl.Shrank)
		if fl.Unit == "bytes" {
			shr = Bytes(uint64(fl.Shrank))
		}
		s += fmt.Sprintf(" Stacks that shrank (%s in all) are not drawn.", shr)
	}
	return s
}

// readProfile parses a stored profile, within memdoctor's limits, through the evidence's
// store: the diagnosis has most likely parsed it already, and keeps the last few.
func (b *builder) readProfile(path string) (*profile.Profile, error) {
	if b.ev != nil {
		return b.ev.Profile(evidence.Snapshot{Path: path})
	}
	return pprofio.Default.ReadFileAs("profile "+filepath.Base(path), path)
}
