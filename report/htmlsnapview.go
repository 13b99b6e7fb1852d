package report

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose"
)

// snapshotHTML is a single profile's view on the page: said as an instant, not a trend.
type snapshotHTML struct {
	Title, Profile string
	Tables         []siteTable
	Patterns       []string
}

// siteTable is one list of sites: what a heap snapshot holds or allocated, or where
// goroutines wait.
type siteTable struct {
	Caption string
	Rows    []siteRow
}

type siteRow struct {
	Amount, Share, State, Function, Where string
}

// snapshotViews renders the diagnosis' snapshot views.
func snapshotViews(d *diagnose.Diagnosis) []snapshotHTML {
	var out []snapshotHTML
	for _, v := range d.Snapshots {
		when := v.Time.Local().Format("2006-01-02 15:04:05")
		h := snapshotHTML{Profile: v.Profile}
		switch v.Kind {
		case "heap":
			h.Title = "Heap snapshot: " + heapWhat(v, when)
			held, allocated := heapHeadings(v)
			h.Tables = append(h.Tables, heapTable(held+": "+snapTotal(v.InuseBytes, v.InuseObjects), v.Retainers),
				heapTable(allocated+": "+snapTotal(v.AllocBytes, v.AllocObjects), v.Allocators))
			for _, p := range v.Patterns {
				h.Patterns = append(h.Patterns, fmt.Sprintf("%s (%s, %s of the bytes): %s", p.Function, p.Name, Percent(p.Share), p.Advice))
			}
		case "goroutine":
			h.Title = fmt.Sprintf("Goroutine snapshot: %s, %s: %d goroutines by the site where they wait", profileWhich(v, "goroutine"), when, v.Goroutines)
			t := siteTable{Caption: "Goroutines by site"}
			for _, g := range v.Groups {
				r := siteRow{Amount: fmt.Sprint(g.Count), Share: Percent(g.Share), State: g.State, Function: g.Function}
				if g.File != "" {
					r.Where = fmt.Sprintf("%s:%d", shortFile(g.File), g.Line)
				}
				if g.Leaked > 0 {
					r.State += fmt.Sprintf(" (%d leaked)", g.Leaked)
				}
				t.Rows = append(t.Rows, r)
			}
			h.Tables = append(h.Tables, t)
		}
		out = append(out, h)
	}
	return out
}

func heapTable(caption string, cs []diagnose.Culprit) siteTable {
	t := siteTable{Caption: caption}
	for _, c := range cs {
		r := siteRow{Amount: amount(c), Share: Percent(c.Share), Function: c.Function}
		if c.File != "" {
			r.Where = fmt.Sprintf("%s:%d", shortFile(c.File), c.Line)
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// notJudgedLines says what could not be judged, and why: the page never calls unseen
// problems absent.
func notJudgedLines(d *diagnose.Diagnosis) []string {
	var out []string
	for _, n := range d.NotJudged {
		out = append(out, string(n.Kind)+": "+n.Reason)
	}
	return out
}
