package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/internal/sanitize"
)

// Diff writes a profile diff: totals, then the top growth by function and by line, each in
// the program's own code, with the stack of the largest. Names from the profiles (functions,
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
	if len(r.ByFunction) > 0 && r.ByFunction[0].Delta > 0 && len(r.ByFunction[0].Stack) > 0 {
		fmt.Fprintf(&b, "\nStack of %s:\n", safe(r.ByFunction[0].Site.Function))
		for _, fr := range r.ByFunction[0].Stack {
			fmt.Fprintf(&b, "  %s\n", safe(fr))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
