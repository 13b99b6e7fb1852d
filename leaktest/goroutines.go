package leaktest

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
)

// A goroutine, as runtime.Stack prints it (the runtime's own frames hidden).
type goroutine struct {
	id    int64
	state string  // what it waits for: "chan receive", "select", "IO wait"
	stack []frame // innermost first; the first is its top function
	// createdBy is the go statement that started it (its function and line), parent the
	// goroutine that ran it.
	createdBy frame
	parent    int64
}

// frame is one line of a stack: a function and where in its source.
type frame struct {
	fn   string
	file string
	line int
}

func (f frame) String() string {
	if f.file == "" {
		return f.fn
	}
	return f.fn + " (" + f.file + ":" + strconv.Itoa(f.line) + ")"
}

// where is the frame's file and line, shortened to the file's last two path elements.
func (f frame) where() string {
	if f.file == "" {
		return f.fn
	}
	return shortFile(f.file) + ":" + strconv.Itoa(f.line)
}

func shortFile(file string) string {
	i := strings.LastIndexByte(file, '/')
	if i <= 0 {
		return file
	}
	if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
		return file[j+1:]
	}
	return file
}

// dumpGoroutines returns every goroutine of the process.
func dumpGoroutines() []goroutine {
	defer unprofiled()()
	buf := make([]byte, max(1<<20, runtime.NumGoroutine()<<9)) // a few hundred bytes each
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return parseGoroutines(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parseGoroutines reads runtime.Stack's text of all goroutines: each a header line
// ("goroutine 7 [chan send, 2 minutes]:"), then a function line and a tab-indented file:line
// line per frame, then "created by F in goroutine N" and its file:line.
func parseGoroutines(text []byte) []goroutine {
	var out []goroutine
	for _, block := range bytes.Split(text, []byte("\n\n")) {
		lines := strings.Split(strings.TrimSpace(string(block)), "\n")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		g := goroutine{}
		head := strings.TrimPrefix(lines[0], "goroutine ")
		id, rest, _ := strings.Cut(head, " ")
		g.id, _ = strconv.ParseInt(id, 10, 64)
		if i, j := strings.IndexByte(rest, '['), strings.LastIndexByte(rest, ']'); i >= 0 && j > i {
			g.state, _, _ = strings.Cut(rest[i+1:j], ",")
		}
		for i := 1; i < len(lines); i++ {
			l := lines[i]
			if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "...") {
				continue
			}
			f := frame{fn: funcName(l)}
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
				f.file, f.line = fileLine(lines[i+1])
			}
			if after, ok := strings.CutPrefix(l, "created by "); ok {
				fn, parent, _ := strings.Cut(after, " in goroutine ")
				f.fn = fn
				g.createdBy = f
				g.parent, _ = strconv.ParseInt(strings.TrimSpace(parent), 10, 64)
				continue
			}
			g.stack = append(g.stack, f)
		}
		out = append(out, g)
	}
	return out
}

// funcName is the function of a stack line "pkg.F(0x1, ...)": the line up to its argument
// list.
func funcName(l string) string {
	if i := strings.LastIndex(l, "("); i > 0 && strings.HasSuffix(l, ")") {
		return l[:i]
	}
	return l
}

// fileLine reads "\t/path/file.go:42 +0x1e".
func fileLine(l string) (string, int) {
	l = strings.TrimSpace(l)
	if i := strings.LastIndex(l, " +0x"); i > 0 {
		l = l[:i]
	}
	i := strings.LastIndexByte(l, ':')
	if i < 0 {
		return l, 0
	}
	n, err := strconv.Atoi(l[i+1:])
	if err != nil {
		return l, 0
	}
	return l[:i], n
}

// top is the goroutine's top function: the first of its stack.
func (g goroutine) top() string {
	if len(g.stack) == 0 {
		return ""
	}
	return g.stack[0].fn
}

// countNotIgnored counts the goroutines of a dump whose top function is not among ignore.
func countNotIgnored(text []byte, ignore []string) int {
	n := 0
	for _, g := range parseGoroutines(text) {
		if !slices.Contains(ignore, g.top()) {
			n++
		}
	}
	return n
}

// own is the goroutine's own function: the one its go statement started, the bottom frame of
// its stack above runtime.goexit (runtime.Stack keeps the outermost frames of a stack too deep
// to print whole). A goroutine caught running the wrapper a go statement with arguments makes
// (pkg.F.gowrap1, shown only then, with runtime.goexit under it) has its function inlined in
// it, unnamed: own is zero.
func (g goroutine) own() frame {
	stack := g.stack
	for len(stack) > 0 && stack[len(stack)-1].fn == "runtime.goexit" {
		stack = stack[:len(stack)-1]
	}
	if len(stack) == 0 {
		return frame{}
	}
	f := stack[len(stack)-1]
	if isGoWrapper(f.fn) {
		return frame{}
	}
	return f
}

// isGoWrapper reports the function a go statement with arguments compiles to
// ("pkg.F.gowrap1"), which calls the function the statement names.
func isGoWrapper(fn string) bool {
	i := strings.LastIndex(fn, ".gowrap")
	if i < 0 {
		return false
	}
	_, err := strconv.Atoi(fn[i+len(".gowrap"):])
	return err == nil
}

// runningState reports a goroutine state of a dump that is not a wait: the goroutine runs or
// is ready to.
func runningState(s string) bool {
	return s == "running" || s == "runnable" || s == "preempted"
}

// goroutineGroup is the goroutines that wait at the same place, started by the same go
// statement and running the same function; or, for goroutines that do not wait (state
// "running": running or runnable), those started by the same go statement running the same
// function, wherever they were.
type goroutineGroup struct {
	state     string
	wait      frame // where they wait (or one of them was): the top of their stack outside the runtime
	fn        frame // their own function (own); its line is where it is defined, 0 until defineFuncs knows
	createdBy frame
	count     int
	sample    goroutine // one of them, for its stack
	added     int       // how many more than at the baseline
}

type groupKey struct {
	state, waitFn, waitFile, fn, createdFn, createdFile string
	waitLine, createdLine                               int
}

// groupGoroutines counts the goroutines by group, leaving out those whose top function is
// ignored.
func groupGoroutines(gs []goroutine, ignore []string) map[groupKey]*goroutineGroup {
	out := map[groupKey]*goroutineGroup{}
	for _, g := range gs {
		if slices.Contains(ignore, g.top()) {
			continue
		}
		var wait frame
		if len(g.stack) > 0 {
			wait = g.stack[0]
		}
		own, state := g.own(), g.state
		k := groupKey{state, wait.fn, wait.file, own.fn, g.createdBy.fn, g.createdBy.file, wait.line, g.createdBy.line}
		if runningState(state) {
			// Where a goroutine that does not wait was is a moment of its run: the go
			// statement and its function are what its kind shares.
			state = "running"
			k = groupKey{state: state, createdFn: g.createdBy.fn, createdFile: g.createdBy.file, createdLine: g.createdBy.line}
		}
		own.line = 0 // where it is defined: defineFuncs
		grp := out[k]
		if grp == nil {
			grp = &goroutineGroup{state: state, wait: wait, fn: own, createdBy: g.createdBy, sample: g}
			out[k] = grp
		}
		if grp.fn.fn == "" && own.fn != "" {
			grp.fn, grp.wait, grp.sample = own, wait, g
		}
		grp.count++
	}
	return out
}

// defineFuncs gives the groups' own functions the file and line of their definition, from
// funcStarts.
func defineFuncs(groups []*goroutineGroup, starts map[string]frame) {
	for _, g := range groups {
		if def, ok := starts[g.fn.fn]; ok && g.fn.fn != "" {
			g.fn = def
		}
	}
}

// grownGroups returns the groups that have more goroutines now than at the baseline, most
// added first.
func grownGroups(before, now map[groupKey]*goroutineGroup) []*goroutineGroup {
	var out []*goroutineGroup
	for k, g := range now {
		n := g.count
		if b := before[k]; b != nil {
			n -= b.count
		}
		if n > 0 {
			g.added = n
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *goroutineGroup) int {
		if a.added != b.added {
			return b.added - a.added
		}
		return strings.Compare(a.wait.String(), b.wait.String())
	})
	return out
}

// provenLeaked reads Go's goroutineleak profile (Go 1.27; Go 1.26 built with
// GOEXPERIMENT=goroutineleakprofile) and counts the goroutines it proves leaked, by top frame:
// blocked on a channel, a mutex or a wait group that no running goroutine can reach, so that
// they can never run again. It returns nil when the runtime has no such profile. Reading it
// costs a garbage collection that looks for them.
func provenLeaked() map[frame]int {
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		return nil
	}
	defer unprofiled()()
	var buf bytes.Buffer
	if err := p.WriteTo(&buf, 1); err != nil {
		return nil
	}
	return parseLeakProfile(buf.String())
}

// parseLeakProfile reads a goroutine profile's text form (debug=1): records "N @ 0x1 0x2"
// followed by "#\t0x1\tpkg.fn+0x1c\t/path/file.go:42" lines, the runtime's own frames at the
// top left out; it counts the goroutines by their first frame.
func parseLeakProfile(text string) map[frame]int {
	out := map[frame]int{}
	n := 0
	top := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case l != "" && l[0] >= '0' && l[0] <= '9' && strings.Contains(l, " @ "):
			count, _, _ := strings.Cut(l, " @ ")
			n, _ = strconv.Atoi(strings.TrimSpace(count))
			top = true
		case top && strings.HasPrefix(l, "#\t"):
			f := strings.Split(l, "\t")
			if len(f) < 4 {
				continue
			}
			fn := f[2]
			if i := strings.LastIndex(fn, "+0x"); i > 0 {
				fn = fn[:i]
			}
			file, line := fileLine(f[3])
			out[frame{fn: fn, file: file, line: line}] += n
			top = false
		case l == "":
			top = false
		}
	}
	return out
}
