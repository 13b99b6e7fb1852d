package report

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/diagnose"
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
// marked in every stack. The tree is built from the root down, a frame only when it is
// wide enough to be drawn: the whole tree, a node per distinct stack prefix, allocated 59%
// more on the Loki profile (BenchmarkFlameDiff).
func flameDiff(old, new *profile.Profile, typ string, opts culprit.Options) (*Flame, error) {
	oi, err := culprit.SampleIndex(old, typ)
	if err != nil {
		return nil, err
	}
	ni, err := culprit.SampleIndex(new, typ)
	if err != nil {
		return nil, err
	}
	unit := new.SampleType[ni].Unit
	var stacks stackSet
	stacks.add(old, oi, -1, opts)
	stacks.add(new, ni, +1, opts)
	var grew []*stackVal
	var total, shrank int64
	for _, sv := range stacks.all {
		switch {
		case sv.delta > 0:
			grew = append(grew, sv)
			total += sv.delta
		case sv.delta < 0:
			shrank -= sv.delta
		}
	}
	sortRootFirst(grew)
	root := &flameNode{name: "all", value: total}
	growFlame(root, grew, 0, int64(float64(total)*minFlameShare))
	f := encodeFlameOf(root, countFrames(grew))
	f.Unit = unit
	f.Shrank = shrank
	return f, nil
}

// stackVal is one distinct stack (function names, leaf first) and what it weighs.
type stackVal struct {
	stack     []string
	culpritAt int // index in stack of the frame attribution picked (-1 for none)
	own       bool
	delta     int64
}

// stackSet holds distinct stacks by a hash of their names (equal names compared on a
// collision), in the order first seen.
type stackSet struct {
	seed  maphash.Seed
	byKey map[uint64][]*stackVal
	all   []*stackVal
}

// add adds sign times the value idx of every sample of p.
func (ss *stackSet) add(p *profile.Profile, idx int, sign int64, opts culprit.Options) {
	if ss.byKey == nil {
		ss.seed, ss.byKey = maphash.MakeSeed(), map[uint64][]*stackVal{}
	}
	for _, s := range p.Sample {
		if s == nil || idx >= len(s.Value) || s.Value[idx] == 0 {
			continue
		}
		site, names := culprit.Attribute(s.Location, opts)
		var h maphash.Hash
		h.SetSeed(ss.seed)
		for _, n := range names {
			writeName(&h, n)
		}
		key := h.Sum64()
		var sv *stackVal
		for _, c := range ss.byKey[key] {
			if slices.Equal(c.stack, names) {
				sv = c
			}
		}
		if sv == nil {
			sv = &stackVal{stack: names, culpritAt: slices.Index(names, site.Function), own: site.Own}
			ss.byKey[key] = append(ss.byKey[key], sv)
			ss.all = append(ss.all, sv)
		}
		sv.delta += sign * s.Value[idx]
	}
}

// writeName hashes a function name with its length, so that no sequence of names hashes
// like another that splits or joins them differently (names are the target's, any bytes).
func writeName(h *maphash.Hash, name string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.WriteString(name)
}

// growFlame gives n, whose stacks are those through it (depth frames below the root), a
// child per next frame wider than min, and so on down: what encodeFlame would draw of the
// whole tree, without building the rest. stacks are sorted root first (sortRootFirst), so
// the stacks through each child are a run of them: no frame is built twice, nothing is
// copied.
func growFlame(n *flameNode, stacks []*stackVal, depth int, min int64) {
	if depth >= maxFlameDepth {
		return
	}
	i := 0
	for i < len(stacks) && len(stacks[i].stack) <= depth { // the stacks that end at n sort first
		i++
	}
	for i < len(stacks) {
		name := frameAt(stacks[i], depth)
		j, v := i, int64(0)
		for ; j < len(stacks) && frameAt(stacks[j], depth) == name; j++ {
			v += stacks[j].delta
		}
		if v > min {
			c := n.child(name)
			c.value = v
			for _, sv := range stacks[i:j] {
				if sv.culpritAt == len(sv.stack)-1-depth {
					c.culprit = true
					c.own = c.own || sv.own
				}
			}
			growFlame(c, stacks[i:j], depth+1, min)
		}
		i = j
	}
}

// frameAt is the frame of sv depth frames below the root.
func frameAt(sv *stackVal, depth int) string { return sv.stack[len(sv.stack)-1-depth] }

// sortRootFirst sorts stacks by their frames from the root (a stack before those it is a
// prefix of), up to maxFlameDepth frames, the ones the tree holds.
func sortRootFirst(stacks []*stackVal) {
	slices.SortFunc(stacks, compareRootFirst)
}

// compareRootFirst compares two stacks frame by frame from the root, up to maxFlameDepth.
func compareRootFirst(a, b *stackVal) int {
	la, lb := min(len(a.stack), maxFlameDepth), min(len(b.stack), maxFlameDepth)
	for d := range min(la, lb) {
		if c := strings.Compare(frameAt(a, d), frameAt(b, d)); c != 0 {
			return c
		}
	}
	return cmp.Compare(la, lb)
}

// commonDepth is how many frames from the root two stacks share, up to maxFlameDepth.
func commonDepth(a, b *stackVal) int {
	n := min(len(a.stack), len(b.stack), maxFlameDepth)
	for d := range n {
		if frameAt(a, d) != frameAt(b, d) {
			return d
		}
	}
	return n
}

// countFrames counts the frames of the whole tree of stacks sorted root first (up to
// maxFlameDepth from the root), the root included: each stack adds the frames it does not
// share with the one before it.
func countFrames(stacks []*stackVal) int {
	n := 1
	for i, sv := range stacks {
		n += min(len(sv.stack), maxFlameDepth)
		if i > 0 {
			n -= commonDepth(stacks[i-1], sv)
		}
	}
	return n
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
func encodeFlame(root *flameNode) *Flame { return encodeFlameOf(root, countNodes(root, 0)) }

// encodeFlameOf is encodeFlame for a tree that may hold only the frames wide enough to draw,
// of a whole tree of total frames.
func encodeFlameOf(root *flameNode, total int) *Flame {
	f := &Flame{Total: root.value}
	min := int64(float64(root.value) * minFlameShare)
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
