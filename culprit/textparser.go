package culprit

import (
	"bytes"
	"math"
)

// textParser is the line-by-line state machine of ParseGoroutineText.
type textParser struct {
	g    *grouper
	seen bool // a record or goroutine header was found

	// The record (debug=1) or goroutine (debug=2) being read.
	active    bool
	debug2    bool
	count     int
	leaked    bool // debug=2 "(leaked)" or a goroutineleak profile record
	leakProf  bool // inside a goroutineleak profile (debug=1)
	state     string
	waitMin   int
	frames    []frame
	createdBy frame
	target    *frame // the frame the next "\tfile:line" line belongs to
	ancestors bool   // after "[originating from goroutine N]:"
}

func (p *textParser) line(b []byte) {
	switch {
	case len(b) == 0:
		p.flush()
	case b[0] == '\t':
		p.fileLine(b[1:])
	case b[0] == '#':
		p.debug1Frame(b)
	case bytes.HasPrefix(b, []byte("goroutine ")) && p.header(b):
	case p.recordHeader(b):
	case p.profileHeader(b):
	case !p.active || !p.debug2 || p.ancestors:
	case bytes.HasPrefix(b, []byte("created by ")):
		p.created(b[len("created by "):])
	case bytes.HasPrefix(b, []byte("...")) && bytes.HasSuffix(b, []byte("frames elided...")):
		p.push(frame{fn: elidedFrame})
	case bytes.HasPrefix(b, []byte("[originating from goroutine ")):
		p.ancestors = true
	case bytes.HasPrefix(b, []byte("non-Go function")):
		p.push(frame{fn: nonGoFrame})
	default:
		p.funcLine(b)
	}
}

// flush ends the current record or goroutine.
func (p *textParser) flush() {
	if !p.active {
		return
	}
	p.active = false
	if p.count <= 0 {
		return
	}
	createdBy := p.createdBy
	if !p.debug2 && len(p.frames) > 0 {
		createdBy = p.frames[len(p.frames)-1]
	}
	leaked := 0
	if p.leaked || p.leakProf && !p.debug2 {
		leaked = p.count
	}
	p.g.add(p.state, p.frames, createdBy, p.debug2, p.count, leaked, p.waitMin)
}

func (p *textParser) start(debug2 bool, count int) {
	p.flush()
	p.seen, p.active, p.debug2, p.count = true, true, debug2, count
	p.leaked, p.state, p.waitMin, p.ancestors = false, "", 0, false
	p.frames, p.createdBy, p.target = p.frames[:0], frame{}, nil
}

func (p *textParser) push(f frame) {
	if len(p.frames) >= maxFrames {
		p.target = nil
		return
	}
	p.frames = append(p.frames, f)
	p.target = &p.frames[len(p.frames)-1]
}

// header parses a debug=2 goroutine header such as
// "goroutine 19 [chan receive, 3 minutes]:" or, with GOTRACEBACK=system,
// "goroutine 1 gp=0xc000002380 m=0 mp=0x5f4b60 [running]:".
func (p *textParser) header(b []byte) bool {
	rest := b[len("goroutine "):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	open := bytes.IndexByte(rest, '[')
	if n == 0 || n == len(rest) || rest[n] != ' ' || open < n || !bytes.HasSuffix(rest, []byte("]:")) {
		return false
	}
	p.start(true, 1)
	p.parseStatus(rest[open+1 : len(rest)-2])
	return true
}

// parseStatus parses "chan receive (leaked) (scan), 3 minutes, locked to
// thread, synctest bubble 1 labels:{...}" (see runtime.goroutineheader).
func (p *textParser) parseStatus(s []byte) {
	if i := bytes.Index(s, []byte(" labels:{")); i >= 0 {
		s = s[:i]
	}
	status, rest, _ := bytes.Cut(s, []byte(", "))
	status = bytes.TrimSuffix(status, []byte(" (scan)"))
	if bytes.HasSuffix(status, []byte(" (leaked)")) {
		status = status[:len(status)-len(" (leaked)")]
		p.leaked = true
	}
	for len(rest) > 0 {
		var part []byte
		part, rest, _ = bytes.Cut(rest, []byte(", "))
		if m, ok := bytes.CutSuffix(part, []byte(" minutes")); ok {
			if v, ok := parseDecimal(m); ok {
				p.waitMin = int(min(v, math.MaxInt32))
			}
		}
	}
	p.state = p.g.intern(status)
}

// recordHeader parses a debug=1 record header "N @ 0x4a1b 0x4a2c".
func (p *textParser) recordHeader(b []byte) bool {
	num, rest, ok := bytes.Cut(b, []byte(" @"))
	if !ok || (len(rest) > 0 && rest[0] != ' ') {
		return false
	}
	n, ok := parseDecimal(num)
	if !ok {
		return false
	}
	p.start(false, int(min(n, math.MaxInt32)))
	return true
}

// profileHeader recognises "goroutine profile: total N" (or goroutineleak).
func (p *textParser) profileHeader(b []byte) bool {
	name, _, ok := bytes.Cut(b, []byte(" profile: total "))
	if !ok {
		return false
	}
	p.flush()
	p.seen = true
	p.leakProf = string(name) == "goroutineleak"
	return true
}

// debug1Frame parses "#\t0x4b3dd4\tmain.worker+0x34\t/src/main.go:20"; the
// columns are padded with tabs by a tabwriter. "# labels: ..." is ignored.
func (p *textParser) debug1Frame(b []byte) {
	if !p.active || p.debug2 {
		return
	}
	var fields [4][]byte
	n := 0
	for f := range bytes.SplitSeq(b, []byte("\t")) {
		if len(f) > 0 && n < len(fields) {
			fields[n] = f
			n++
		}
	}
	if n < 2 || string(fields[0]) != "#" || !bytes.HasPrefix(fields[1], []byte("0x")) {
		return
	}
	if n == 2 { // no symbol: the PC stands in for the function
		p.push(frame{fn: p.g.intern(fields[1])})
		return
	}
	fn := fields[2]
	if i := bytes.LastIndex(fn, []byte("+0x")); i > 0 {
		fn = fn[:i]
	}
	f := frame{fn: p.internFunc(fn)}
	if n == 4 {
		f.file, f.line = p.splitFileLine(fields[3])
	}
	p.push(f)
}

// funcLine parses a debug=2 frame "pkg.(*T).M(0xc000010000, ...)".
func (p *textParser) funcLine(b []byte) {
	i := bytes.LastIndexByte(b, '(')
	if i <= 0 || b[len(b)-1] != ')' {
		return
	}
	fn := b[:i]
	if string(fn) == "panic" { // how tracebacks print runtime.gopanic
		fn = []byte("runtime.gopanic")
	}
	p.push(frame{fn: p.internFunc(fn)})
}

// created parses "main.main in goroutine 1" (Go 1.21+) or "main.main".
func (p *textParser) created(b []byte) {
	if i := bytes.Index(b, []byte(" in goroutine ")); i >= 0 {
		b = b[:i]
	}
	p.createdBy = frame{fn: p.internFunc(b)}
	p.target = &p.createdBy
}

// fileLine parses "\t/src/main.go:20 +0x34" (maybe " fp=... sp=... pc=...")
// into the frame it follows.
func (p *textParser) fileLine(b []byte) {
	if p.target == nil || !p.active || !p.debug2 || p.ancestors {
		return
	}
	if i := bytes.Index(b, []byte(" fp=")); i >= 0 {
		b = b[:i]
	}
	if i := bytes.LastIndex(b, []byte(" +0x")); i >= 0 {
		b = b[:i]
	}
	p.target.file, p.target.line = p.splitFileLine(b)
	p.target = nil
}

func (p *textParser) splitFileLine(b []byte) (string, int64) {
	i := bytes.LastIndexByte(b, ':')
	if i < 0 {
		return "", 0
	}
	line, ok := parseDecimal(b[i+1:])
	if !ok {
		return "", 0
	}
	return p.g.intern(b[:i]), line
}

func (p *textParser) internFunc(b []byte) string { return p.g.internFunc(b) }

// parseDecimal parses a non-negative decimal number without allocating;
// values beyond 1e15 are capped.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < 1e15 {
			n = n*10 + int64(c-'0')
		}
	}
	return n, true
}
