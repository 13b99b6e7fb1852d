package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/holders"
)

// holdersView is the "Who holds it" section: what memdoctor holders found, saved in the
// session.
type holdersView struct {
	Heading  string
	Culprits []holderCulprit
	Notes    []string
	Pprof    bool // memdoctor serve: the paths open in pprof's web UI
}

type holderCulprit struct {
	Site, Amount string
	Paths        []holderPath
	Cuts         []string
	Covered      string
}

type holderPath struct {
	Share, Amount, Expr, Describe string
}

// holdersSection reads the session's holders, if memdoctor holders saved them there.
func (b *builder) holdersSection() (*holdersView, error) {
	if b.s == nil {
		return nil, nil
	}
	r, ok, err := holders.Load(b.s.Dir)
	if !ok || err != nil {
		return nil, err
	}
	v := &holdersView{Notes: r.Notes, Pprof: b.opts.Serve}
	what := fmt.Sprintf("process %d", r.Target.PID)
	if r.Target.Kind == "core" {
		what = "a core of " + r.Target.Exe
	}
	v.Heading = fmt.Sprintf("Read from %s (%s): %s in %d objects reachable from %d roots", what, r.Target.GoVersion,
		Bytes(r.Heap.Bytes), r.Heap.Objects, r.Heap.Roots)
	if r.Stopped > 0 {
		v.Heading += fmt.Sprintf("; the process was stopped for %s", time.Duration(r.Stopped*float64(time.Millisecond)).Round(time.Millisecond))
	}
	for _, c := range r.Culprits {
		hc := holderCulprit{Site: c.Site, Amount: fmt.Sprintf("about %s in use, %d sampled objects", Bytes(uint64(c.Bytes)), c.Samples)}
		for _, p := range c.Paths {
			hc.Paths = append(hc.Paths, holderPath{Share: Percent(p.Share), Amount: Bytes(uint64(p.Bytes)), Expr: p.Expr, Describe: describeHops(p)})
		}
		for _, cut := range c.Cuts {
			hc.Cuts = append(hc.Cuts, cut.Said())
		}
		if len(c.Paths) > 0 && c.Covered < 0.999 {
			hc.Covered = "these paths hold " + Percent(c.Covered) + " of the reachable sampled bytes"
		}
		v.Culprits = append(v.Culprits, hc)
	}
	return v, nil
}

// describeHops is the types along a path, as the text says them.
func describeHops(p holders.Path) string {
	parts := []string{p.Root.Kind}
	if p.Root.Wait != "" {
		parts[0] += " [" + p.Root.Wait + "]"
	}
	last := p.Root.Type
	if last != "" {
		parts = append(parts, last)
	}
	for _, h := range p.Hops {
		if h.Type != "" && h.Type != last {
			parts = append(parts, h.Type)
			last = h.Type
		}
	}
	return strings.Join(parts, " → ")
}
