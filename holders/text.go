package holders

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/sanitize"
	"github.com/memdoctor/memdoctor/units"
)

// WriteText writes the result for a terminal: what was read and for how long it was stopped,
// then under each culprit its heaviest paths and what to cut to free them.
// Names read from the target are shown with control characters escaped.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	t := r.Target
	what := fmt.Sprintf("process %d", t.PID)
	if t.Kind == "core" {
		what = fmt.Sprintf("core %s of %s", t.Core, t.Exe)
	}
	fmt.Fprintf(&b, "Holders in %s (%s, %s)", clean(what), clean(t.GoVersion), t.Arch)
	if r.Stopped > 0 {
		fmt.Fprintf(&b, ": stopped for %s", units.Duration(time.Duration(r.Stopped*float64(time.Millisecond))))
	}
	b.WriteString("\n")
	h := r.Heap
	fmt.Fprintf(&b, "Heap: %s in %s objects reachable from %s roots, %d goroutines; %s objects sampled",
		units.Bytes(float64(h.Bytes)), count(h.Objects), count(h.Roots), h.Goroutines, count(h.Samples))
	if h.SampleRate > 0 {
		fmt.Fprintf(&b, " (one per %s allocated)", units.Bytes(float64(h.SampleRate)))
	}
	b.WriteString("\n")
	for _, c := range r.Culprits {
		writeCulprit(&b, c)
	}
	if len(r.Culprits) == 0 {
		b.WriteString("\nNo sampled object matched: nothing to show.\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", clean(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCulprit(b *strings.Builder, c Culprit) {
	if c.Samples == 0 {
		fmt.Fprintf(b, "\n%s: no sampled object was allocated there: no allocation stack has that function "+
			"(give its full name as pprof prints it, or its end after a dot or a slash)\n", clean(c.Site))
		return
	}
	fmt.Fprintf(b, "\n%s: about %s in use (%s sampled objects)", clean(c.Site), units.Bytes(c.Bytes), count(c.Samples))
	if c.GarbageSamples > 0 {
		fmt.Fprintf(b, "; %s of it unreachable, freed at the next GC", units.Bytes(c.GarbageBytes))
	}
	b.WriteString("\n")
	if len(c.Paths) == 0 {
		b.WriteString("  no sampled object of this site is reachable\n")
		return
	}
	b.WriteString("  held by:\n")
	for _, p := range c.Paths {
		fmt.Fprintf(b, "  %6s %10s  %s\n", units.Percent(p.Share), units.Bytes(p.Bytes), clean(p.Expr))
		fmt.Fprintf(b, "  %6s %10s  %s\n", "", "", clean(describe(p)))
	}
	if c.Covered < 0.999 {
		fmt.Fprintf(b, "  (these paths hold %s of the reachable sampled bytes)\n", units.Percent(c.Covered))
	}
	if len(c.Cuts) > 0 {
		b.WriteString("  to free it, cut:\n")
		for _, cut := range c.Cuts {
			what := cut.what()
			if cut.Type != "" {
				what += " (" + cut.Type + ")"
			}
			fmt.Fprintf(b, "  %6s %10s  %s: frees %s in %s objects\n", units.Percent(cut.Share), units.Bytes(cut.Bytes), clean(what),
				units.Bytes(float64(cut.Frees)), count(cut.FreesObjects))
			if cut.Field != "" && cut.Field != cut.Expr {
				fmt.Fprintf(b, "  %6s %10s  reached as %s\n", "", "", clean(cut.Expr))
			}
		}
	}
}

// describe says what kind of root a path starts at and the types along it.
func describe(p Path) string {
	var s strings.Builder
	r := p.Root
	switch r.Kind {
	case "global":
		if r.Static {
			s.WriteString("the static package variable " + r.Name + " points at")
		} else {
			s.WriteString("package variable")
		}
	case "goroutine":
		switch n := len(p.Goroutines); {
		case n == 1:
			fmt.Fprintf(&s, "goroutine %d", p.Goroutines[0])
		case n > 1:
			fmt.Fprintf(&s, "%d goroutines (%s)", n, joinIDs(p.Goroutines))
		default:
			s.WriteString("a goroutine")
		}
		if r.Wait != "" {
			fmt.Fprintf(&s, " [%s]", r.Wait)
		}
		s.WriteString(", local variable")
	default:
		s.WriteString(r.Kind)
	}
	if r.Guess != "" {
		s.WriteString(" (a guess: " + r.Guess + ")")
	}
	last := r.Type
	if r.Type != "" && !r.Static {
		s.WriteString(" " + r.Type)
	}
	for _, h := range p.Hops {
		if h.Type != "" && h.Type != last {
			s.WriteString(" → " + h.Type)
			last = h.Type
		}
	}
	return s.String()
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

func count(n int) string { return units.Number(float64(n)) }

func clean(s string) string { return sanitize.Text(s) }
