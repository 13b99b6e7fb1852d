package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/internal/culprit"
)

// Flame tree limits: a node narrower than minFlameShare of the whole is dropped (it would be
// under a pixel wide), and at most maxFlameNodes are kept, so a flame graph stays a few tens
// of kilobytes whatever the profile.
const (
	minFlameShare = 0.002
	maxFlameNodes = 2500
	maxFlameDepth = 128
)

// flameNode is a frame of the stack tree, its children by function name.
type flameNode struct {
	name     string
	value    int64
	culprit  bool // attribution picked this frame for some stack through it
	own      bool // ... and it is the program's own code
	children map[string]*flameNode
}

func (n *flameNode) child(name string) *flameNode {
	if n.children == nil {
		n.children = make(map[string]*flameNode)
	}
	c := n.children[name]
	if c == nil {
		c = &flameNode{name: name}
		n.children[name] = c
	}
	return c
}

// add adds value along stack (leaf first); culpritAt is the index in stack of the frame
// attribution picked (-1 for none).
func (n *flameNode) add(stack []string, value int64, culpritAt int, own bool) {
	n.value += value
	cur := n
	depth := 0
	for i := len(stack) - 1; i >= 0 && depth < maxFlameDepth; i-- {
		cur = cur.child(stack[i])
		cur.value += value
		if i == culpritAt {
			cur.culprit = true
			cur.own = cur.own || own
		}
		depth++
	}
}

// flameDiff builds the icicle of what grew between two profiles in sample type typ: each
// distinct stack (by function names) weighs new minus old, and the stacks that grew are
// drawn. Frames are attributed with the culprit package, so the frame a finding blames is
// marked in every stack.
func flameDiff(old, new *profile.Profile, typ string, opts culprit.Options) (*Flame, error) {
	oi, err := culprit.SampleIndex(old, typ)
	if err != nil {
		return nil, err
	}
	ni, err := culprit.SampleIndex(new, typ)
	if err != nil {
		return nil, err
	}
	type stackVal struct {
		stack     []string
		culpritAt int
		own       bool
		delta     int64
	}
	stacks := make(map[string]*stackVal)
	add := func(p *profile.Profile, idx int, sign int64) {
		for _, s := range p.Sample {
			if s == nil || idx >= len(s.Value) || s.Value[idx] == 0 {
				continue
			}
			site, names := culprit.Attribute(s.Location, opts)
			key := strings.Join(names, "\x00")
			sv := stacks[key]
			if sv == nil {
				sv = &stackVal{stack: names, culpritAt: slices.Index(names, site.Function), own: site.Own}
				stacks[key] = sv
			}
			sv.delta += sign * s.Value[idx]
		}
	}
	add(old, oi, -1)
	add(new, ni, +1)
	root := &flameNode{name: "all"}
	var shrank int64
	keys := make([]string, 0, len(stacks))
	for k := range stacks {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a deterministic tree whatever the map order
	for _, k := range keys {
		sv := stacks[k]
		switch {
		case sv.delta > 0:
			root.add(sv.stack, sv.delta, sv.culpritAt, sv.own)
		case sv.delta < 0:
			shrank -= sv.delta
		}
	}
	f := encodeFlame(root)
	f.Unit = new.SampleType[ni].Unit
	f.Shrank = shrank
	return f, nil
}

// flameCulprits builds an icicle from a finding's culprits' stacks, each as wide as what the
// culprit accounts for (bytes, else count, else share).
func flameCulprits(cs []diagnose.Culprit) *Flame {
	root := &flameNode{name: "all"}
	unit := "bytes"
	for _, c := range cs {
		if c.Bytes == 0 {
			unit = "count"
		}
	}
	for _, c := range cs {
		if len(c.Stack) == 0 {
			continue
		}
		v := abs64(c.Bytes)
		if unit == "count" {
			v = abs64(c.Count)
		}
		if v == 0 {
			continue
		}
		root.add(c.Stack, v, slices.Index(c.Stack, c.Function), c.Own)
	}
	if root.value == 0 {
		return nil
	}
	f := encodeFlame(root)
	f.Unit = unit
	return f
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// encodeFlame flattens a tree in pre-order, children widest first, dropping the nodes too
// narrow to see (raising the bar until at most maxFlameNodes remain).
func encodeFlame(root *flameNode) *Flame {
	f := &Flame{Total: root.value}
	min := int64(float64(root.value) * minFlameShare)
	total := countNodes(root, 0)
	for countNodes(root, min) > maxFlameNodes {
		min = max(min*2, 1)
	}
	names := make(map[string]int)
	var walk func(n *flameNode)
	walk = func(n *flameNode) {
		kids := make([]*flameNode, 0, len(n.children))
		for _, c := range n.children {
			if c.value > min {
				kids = append(kids, c)
			}
		}
		slices.SortFunc(kids, func(a, b *flameNode) int {
			return cmp.Or(cmp.Compare(b.value, a.value), cmp.Compare(a.name, b.name))
		})
		id, ok := names[n.name]
		if !ok {
			id = len(f.Names)
			names[n.name] = id
			f.Names = append(f.Names, n.name)
		}
		var flags int64
		if n.culprit {
			flags |= 1
		}
		if n.own {
			flags |= 2
		}
		f.Nodes = append(f.Nodes, [4]int64{int64(id), n.value, int64(len(kids)), flags})
		for _, c := range kids {
			walk(c)
		}
	}
	walk(root)
	f.Dropped = total - len(f.Nodes)
	return f
}

// countNodes counts the nodes wider than min (the root always counts).
func countNodes(n *flameNode, min int64) int {
	c := 1
	for _, k := range n.children {
		if k.value > min {
			c += countNodes(k, min)
		}
	}
	return c
}
