package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/sanitize"
)

// Diff writes a profile diff: totals, then the top growth by function and by line, each in
// the program's own code, what shrank by function, and the stack of the largest growth. Names from the profiles (functions,
// files) and the file names are sanitized: a profile may hold escape sequences.
func Diff(w io.Writer, oldName, newName string, r *culprit.DiffResult, top int) error {
	var b strings.Builder
	safe := sanitize.Text
	val := func(v int64) string {
		if r.Unit == "bytes" {
			return SignedBytes(v)
		}
		return fmt.Sprintf("%+d", v)
	}
	abs := func(v int64) string {
		if r.Unit == "bytes" {
			if v < 0 {
				return "-" + Bytes(uint64(-v))
			}
			return Bytes(uint64(v))
		}
		return fmt.Sprint(v)
	}
	fmt.Fprintf(&b, "%s: %s -> %s (%s)\n", safe(r.Type), abs(r.OldTotal), abs(r.NewTotal), val(r.NewTotal-r.OldTotal))
	fmt.Fprintf(&b, "  old: %s\n  new: %s\n", safe(oldName), safe(newName))
	if r.Type == "alloc_space" || r.Type == "alloc_objects" {
		fmt.Fprintf(&b, "  allocated between the two: %s\n", val(r.Growth))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", safe(warn))
	}
	section := func(title string, ds []culprit.Delta, line bool) {
		fmt.Fprintf(&b, "\n%s\n", title)
		shown := 0
		for _, d := range ds {
			if shown == top || d.Delta <= 0 {
				break
			}
			where := d.Site.Function
			if line {
				where = fmt.Sprintf("%s:%d  %s", shortFile(d.Site.File), d.Site.Line, d.Site.Function)
			}
			fmt.Fprintf(&b, "  %12s %6s  %s\n", val(d.Delta), Percent(d.Share), safe(where))
			shown++
		}
		if shown == 0 {
			fmt.Fprintf(&b, "  nothing grew\n")
		}
	}
	section("By function (the program's own code):", r.ByFunction, false)
	section("By line:", r.ByLine, true)
	fmt.Fprintf(&b, "\nWhat shrank, by function (%s in all):\n", val(-r.Shrinkage))
	shown := 0
	for i := len(r.ByFunction) - 1; i >= 0 && shown < top; i-- {
		d := r.ByFunction[i]
		if d.Delta >= 0 {
			break
		}
		fmt.Fprintf(&b, "  %12s  %s (%s -> %s)\n", val(d.Delta), safe(d.Site.Function), abs(d.Old), abs(d.New))
		shown++
	}
	if shown == 0 {
		fmt.Fprintf(&b, "  nothing shrank\n")
	}
	if len(r.ByFunction) > 0 && r.ByFunction[0].Delta > 0 && len(r.ByFunction[0].Stack) > 0 {
		fmt.Fprintf(&b, "\nStack of %s:\n", safe(r.ByFunction[0].Site.Function))
		for _, fr := range r.ByFunction[0].Stack {
			fmt.Fprintf(&b, "  %s\n", safe(fr))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// GoroutineDiff writes a goroutine profile diff by site: totals, the sites whose goroutines
// grew, those that shrank, each with its wait state and the program's own frame, and the
// stack of the largest growth.
func GoroutineDiff(w io.Writer, oldName, newName string, r *culprit.GoroutineDiff, top int) error {
	var b strings.Builder
	safe := sanitize.Text
	fmt.Fprintf(&b, "goroutines: %d -> %d (%+d)\n", r.OldTotal, r.NewTotal, r.NewTotal-r.OldTotal)
	fmt.Fprintf(&b, "  old: %s\n  new: %s\n", safe(oldName), safe(newName))
	section := func(title string, ds []culprit.SiteDelta, total int) {
		fmt.Fprintf(&b, "\n%s\n", title)
		for i, d := range ds {
			if i == top {
				fmt.Fprintf(&b, "  … %d more site(s) in the JSON\n", len(ds)-i)
				break
			}
			state := d.State
			if state == "" {
				state = "-"
			}
			where := d.Site.Function
			if d.Site.File != "" {
				where += fmt.Sprintf("  %s:%d", shortFile(d.Site.File), d.Site.Line)
			}
			fmt.Fprintf(&b, "  %+7d %6s  %5d -> %-5d %-14s %s\n", d.Delta, Percent(float64(abs(d.Delta))/float64(max(total, 1))), d.Old, d.New, safe(state), safe(where))
		}
		if len(ds) == 0 {
			fmt.Fprintf(&b, "  none\n")
		}
	}
	section(fmt.Sprintf("Grew, by site (the program's own code; %+d in all):", r.Growth), r.Grew, r.Growth)
	section(fmt.Sprintf("Shrank, by site (%+d in all):", -r.Shrinkage), r.Shrank, r.Shrinkage)
	if len(r.Grew) > 0 && len(r.Grew[0].Stack) > 0 {
		g := r.Grew[0]
		fmt.Fprintf(&b, "\nStack of %s", safe(g.Site.Function))
		if g.CreatedBy != "" {
			fmt.Fprintf(&b, " (started by %s)", safe(g.CreatedBy))
		}
		fmt.Fprintf(&b, ":\n")
		for _, fr := range g.Stack {
			fmt.Fprintf(&b, "  %s\n", safe(fr))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
