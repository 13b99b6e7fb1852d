package culprit

import (
	"encoding/binary"

	"github.com/google/pprof/profile"
)

// stackSum is one distinct stack, identified by its frames' functions and
// lines (so that it matches across processes and address mappings), with its
// attribution and the values summed over the samples that share it.
type stackSum struct {
	key  string // the frame IDs (see collapser.table), varint-encoded
	site Site
	v    [2]int64 // Diff: old, new; Aggregate: 0, value
	// observer: a frame of the stack is the observer's (Observer): what profilers reading
	// the process made it allocate.
	observer bool
}

func (s *stackSum) weight() int64 { return s.v[1] - s.v[0] }

// tableFrame is a distinct frame with its attribution class.
type tableFrame struct {
	frame
	class    frameClass
	observer bool // observerFrame
}

type frameKey struct {
	fn   string
	line int64
}

// collapser sums the samples of profiles into stackSums. Each location is
// expanded (inlined calls, names, classes) once, into IDs of a frame table
// shared by all the profiles it reads, so a stack's identity is a short
// string of IDs and attribution runs once per distinct stack.
type collapser struct {
	opts    Options
	stacks  map[string]*stackSum
	table   []tableFrame
	ids     map[frameKey]uint32
	byLoc   map[*profile.Location][]uint32
	buf     []byte
	scratch []frame
	stack   []uint32
}

func newCollapser(opts Options) *collapser {
	return &collapser{
		opts:   opts,
		stacks: make(map[string]*stackSum),
		ids:    make(map[frameKey]uint32),
	}
}

// add sums sample type idx of p into slot (0 or 1) and returns the total of
// all its sample values.
func (c *collapser) add(p *profile.Profile, idx, slot int) int64 {
	c.byLoc = make(map[*profile.Location][]uint32, len(p.Location))
	var total int64
	for _, s := range p.Sample {
		if s == nil || idx >= len(s.Value) || s.Value[idx] == 0 {
			continue
		}
		v := s.Value[idx]
		total += v
		c.buf = c.buf[:0]
		for _, l := range s.Location {
			for _, id := range c.locationFrames(l) {
				c.buf = binary.AppendUvarint(c.buf, uint64(id))
			}
		}
		st, ok := c.stacks[string(c.buf)]
		if !ok {
			st = &stackSum{key: string(c.buf)}
			st.site = c.attribute(st.key)
			st.observer = c.observed(st.key)
			c.stacks[st.key] = st
		}
		st.v[slot] += v
	}
	return total
}

// locationFrames returns the frame IDs of l (innermost first), computed once.
func (c *collapser) locationFrames(l *profile.Location) []uint32 {
	if l == nil {
		return nil
	}
	if ids, ok := c.byLoc[l]; ok {
		return ids
	}
	c.scratch = appendFrames(c.scratch[:0], []*profile.Location{l})
	ids := make([]uint32, len(c.scratch))
	for i, f := range c.scratch {
		ids[i] = c.frameID(f)
	}
	c.byLoc[l] = ids
	return ids
}

func (c *collapser) frameID(f frame) uint32 {
	k := frameKey{f.fn, f.line}
	if id, ok := c.ids[k]; ok {
		return id
	}
	id := uint32(len(c.table))
	c.table = append(c.table, tableFrame{frame: f, class: classOf(f.fn, c.opts), observer: observerFrame(f.fn)})
	c.ids[k] = id
	return id
}

// decode returns the frame IDs of a stack key (in c.stack, reused).
func (c *collapser) decode(key string) []uint32 {
	c.stack = c.stack[:0]
	var id uint32
	var shift uint
	for i := 0; i < len(key); i++ {
		b := key[i]
		id |= uint32(b&0x7f) << shift
		shift += 7
		if b < 0x80 {
			c.stack = append(c.stack, id)
			id, shift = 0, 0
		}
	}
	return c.stack
}

func (c *collapser) attribute(key string) Site {
	ids := c.decode(key)
	i, own := pickSite(len(ids), c.opts.MainModule != "", func(i int) frameClass {
		return c.table[ids[i]].class
	})
	if i < 0 {
		return Site{Function: unknownFunction}
	}
	return siteOf(c.table[ids[i]].frame, own)
}

// observed reports a stack of the observer (Observer), from its key.
func (c *collapser) observed(key string) bool {
	for _, id := range c.decode(key) {
		if c.table[id].observer {
			return true
		}
	}
	return false
}

// names returns the functions of a stack, leaf first.
func (c *collapser) names(s *stackSum) []string {
	ids := c.decode(s.key)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = c.table[id].fn
	}
	return out
}
