package evidence

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/session"
)

// ProfileInfo is what a profile file holds, read from its content (never its name): its
// kind, when it was taken, and its totals. It is small: the stacks are not kept.
type ProfileInfo struct {
	// Kind is the snapshot kind: session.KindHeap, session.KindGoroutine or
	// KindGoroutineLeak; "" for a profile that is not about memory (What says what it is).
	Kind string
	// What names it for a reader: "heap profile", "CPU profile", "goroutine dump (debug=2)".
	What   string
	Format pprofio.Format
	Types  string // its sample types, "alloc_objects/count, alloc_space/bytes, ..."
	// Time is when it was taken, as the profile says (zero: it does not say, as the text
	// formats do not).
	Time time.Time
	// Window is what a delta profile (?seconds=N) covers; 0 for a snapshot.
	Window time.Duration
	// Binary and BuildID name the program that wrote it (its first mapping), when known.
	Binary, BuildID string
	Samples         int

	// Heap profiles: the total of each sample type, and which it has.
	Heap               HeapTotal
	HasInuse, HasAlloc bool
	// Goroutine and goroutineleak profiles: the goroutines counted, and those the runtime
	// marked leaked (a goroutineleak profile's, or "(leaked)" in a debug=2 dump).
	Goroutines, Leaked int64
}

// ReadProfileInfo reads what the profile at path holds, within the profile limits, and
// remembers it: adding the file as a snapshot afterwards costs no second read. A file that
// is not a readable profile is an error (wrapping pprofio.ErrNotProfile or ErrTooLarge),
// remembered too; it is not named in the notes (the caller says what it skipped).
func (ev *Evidence) ReadProfileInfo(path string) (ProfileInfo, error) {
	in, err := ev.profiles.info(path, false)
	if err != nil {
		return ProfileInfo{}, err
	}
	return *in, nil
}

// maxInfos bounds the profile summaries kept (a few hundred bytes each).
const maxInfos = 1 << 17

// info returns the summary of the profile at path, read once; note names a failure in the
// notes.
func (st *store) info(path string, note bool) (*ProfileInfo, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if in, ok := st.infos[path]; ok {
		return in, nil
	}
	if err, ok := st.failed[path]; ok {
		return nil, err
	}
	in, err := st.readInfo(path)
	if err != nil {
		if note {
			st.fail(path, err)
		} else {
			st.failed[path] = err
		}
		return nil, err
	}
	if len(st.infos) < maxInfos {
		st.infos[path] = in
	}
	return in, nil
}

// readInfo reads a profile's summary: a protobuf's from its encoding, without decoding its
// stacks; a legacy text profile parsed; a goroutine dump grouped (its groups are kept for
// GoroutineSites).
func (st *store) readInfo(path string) (*ProfileInfo, error) {
	name := filepath.Base(path)
	data, err := st.limits.ReadFileDataAs(name, path)
	if err != nil {
		return nil, err
	}
	head := data[:min(len(data), pprofio.SniffLen)]
	switch pprofio.Sniff(head) {
	case pprofio.FormatGoroutineText:
		groups, typ, err := parseDump(name, data, st.opts)
		if err != nil {
			return nil, err
		}
		st.keepGroups(path, groups)
		return dumpInfo(groups, typ, data), nil
	case pprofio.FormatProto:
		sum, err := pprofio.Summarize(name, data)
		if err != nil {
			return nil, err
		}
		in := infoOf(sum, pprofio.FormatProto)
		if in.Kind == "" && unnamedType(sum) {
			p, err := st.limits.ParseProto(name, data)
			if err != nil {
				return nil, err
			}
			if goroutineStacks(p) {
				in.Kind, in.What, in.Goroutines = session.KindGoroutine, "goroutine profile (its sample type unnamed)", sum.Totals[0]
			}
		}
		return in, nil
	}
	p, err := st.limits.ParseData(name, data)
	if err != nil {
		return nil, err
	}
	return infoOf(pprofio.SummaryOf(p), pprofio.FormatLegacy), nil
}

// parse reads a profile whole: a goroutine dump becomes a count profile of its groups.
func (st *store) parse(path string) (*profile.Profile, error) {
	p, _, err := st.parseCost(path)
	return p, err
}

// parseCost is parse that also says about what holding the profile costs: what parsing it
// was estimated to allocate (pprofio.Estimate).
func (st *store) parseCost(path string) (*profile.Profile, int64, error) {
	name := filepath.Base(path)
	data, err := st.limits.ReadFileDataAs(name, path)
	if err != nil {
		return nil, 0, err
	}
	cost := pprofio.Estimate(data)
	if pprofio.Sniff(data[:min(len(data), pprofio.SniffLen)]) == pprofio.FormatGoroutineText {
		groups, typ, err := parseDump(name, data, st.opts)
		if err != nil {
			return nil, 0, err
		}
		st.keepGroups(path, groups)
		return culprit.GroupsProfile(groups, typ), cost, nil
	}
	p, err := st.limits.ParseData(name, data)
	return p, cost, err
}

// parseDump groups a goroutine text dump and says its profile type (goroutine, or
// goroutineleak for a debug=1 goroutineleak profile).
func parseDump(name string, data []byte, opts culprit.Options) ([]culprit.GoroutineGroup, string, error) {
	groups, err := culprit.ParseGoroutineText(bytes.NewReader(data), opts)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w: %w", name, pprofio.ErrNotProfile, err)
	}
	typ := "goroutine"
	if bytes.HasPrefix(bytes.TrimSpace(data[:min(len(data), 64)]), []byte("goroutineleak profile:")) {
		typ = KindGoroutineLeak
	}
	return groups, typ, nil
}

// keepGroups keeps a dump's groups by site: the dump is their only source of wait states.
func (st *store) keepGroups(path string, groups []culprit.GoroutineGroup) {
	st.dumps[path] = true
	if len(st.groups) >= maxTables {
		clear(st.groups)
	}
	st.groups[path] = culprit.GroupBySite(groups)
}

// dumpInfo summarizes a goroutine dump.
func dumpInfo(groups []culprit.GoroutineGroup, typ string, data []byte) *ProfileInfo {
	in := &ProfileInfo{Kind: session.KindGoroutine, Format: pprofio.FormatGoroutineText, Types: typ + "/count", Samples: len(groups)}
	for _, g := range groups {
		in.Goroutines += int64(g.Count)
		in.Leaked += int64(g.Leaked)
	}
	switch {
	case typ == KindGoroutineLeak:
		in.Kind, in.What = KindGoroutineLeak, "goroutineleak profile (debug=1 text)"
	case bytes.HasPrefix(bytes.TrimSpace(data[:min(len(data), 64)]), []byte("goroutine profile:")):
		in.What = "goroutine profile (debug=1 text)"
	default:
		in.What = "goroutine dump (debug=2 text)"
	}
	return in
}

// infoOf classifies a profile by its sample types.
func infoOf(sum *pprofio.Summary, f pprofio.Format) *ProfileInfo {
	in := &ProfileInfo{Format: f, Types: typesOf(sum), Binary: sum.MainBinary, BuildID: sum.BuildID, Samples: sum.Samples}
	if sum.TimeNanos > 0 {
		in.Time = time.Unix(0, sum.TimeNanos).UTC()
	}
	in.Kind, in.What = kindOfTypes(sum)
	switch in.Kind {
	case session.KindHeap:
		for i, st := range sum.SampleTypes {
			v := sum.Totals[i]
			switch st.Type {
			case "inuse_space":
				in.Heap.InuseSpace, in.HasInuse = v, true
			case "inuse_objects":
				in.Heap.InuseObjects = v
			case "alloc_space":
				in.Heap.AllocSpace, in.HasAlloc = v, true
			case "alloc_objects":
				in.Heap.AllocObjects = v
			}
		}
		// net/http/pprof's ?seconds=N sets the window it covers, and so do profile stores
		// that merge profiles; an ordinary profile's duration is the time it took to write
		// (well under a second).
		if d := time.Duration(sum.DurationNanos); d >= time.Second {
			in.Window = d
			in.What = fmt.Sprintf("heap profile covering %s (a delta or merged profile)", d.Round(time.Second))
		}
	case session.KindGoroutine, KindGoroutineLeak:
		in.Goroutines = sum.Totals[0]
		if in.Kind == KindGoroutineLeak {
			in.Leaked = in.Goroutines
		}
	}
	return in
}

// kindOfTypes names a profile by its sample types: a heap profile has any of the four
// heap types ("allocs" and merged profiles keep only some).
func kindOfTypes(sum *pprofio.Summary) (kind, what string) {
	has := func(typ string) bool {
		for _, st := range sum.SampleTypes {
			if st.Type == typ {
				return true
			}
		}
		return false
	}
	switch {
	case has("inuse_space") || has("alloc_space") || has("inuse_objects") || has("alloc_objects"):
		return session.KindHeap, "heap profile"
	case len(sum.SampleTypes) == 1 && has("goroutine"):
		return session.KindGoroutine, "goroutine profile"
	case len(sum.SampleTypes) == 1 && has(KindGoroutineLeak):
		return KindGoroutineLeak, "goroutineleak profile"
	case has("cpu") || sum.PeriodType.Type == "cpu":
		return "", "CPU profile"
	case has("contentions") || has("delay"):
		return "", "mutex or block profile"
	case has("threadcreate"):
		return "", "threadcreate profile"
	case len(sum.SampleTypes) == 0:
		return "", "profile without sample types"
	}
	return "", "profile of " + typesOf(sum)
}

// unnamedType reports a profile whose only sample type has no name (some collectors lose
// the goroutine profile's).
func unnamedType(sum *pprofio.Summary) bool {
	return len(sum.SampleTypes) == 1 && sum.SampleTypes[0].Type == ""
}

// goroutineStacks reports whether most goroutines of an unnamed profile are parked: every
// goroutine profile's stacks end in the scheduler (runtime.gopark), but for the one that
// writes the profile.
func goroutineStacks(p *profile.Profile) bool {
	var parked, all int64
	for _, s := range p.Sample {
		if len(s.Value) == 0 {
			continue
		}
		all += s.Value[0]
		for _, l := range s.Location {
			if l != nil && len(l.Line) > 0 && l.Line[0].Function != nil && isPark(l.Line[0].Function.Name) {
				parked += s.Value[0]
				break
			}
		}
	}
	return all > 0 && parked*2 > all
}

func isPark(fn string) bool {
	switch fn {
	case "runtime.gopark", "runtime.goparkunlock", "runtime.Gosched", "runtime.goroutineProfileWithLabels",
		"runtime/pprof.runtime_goroutineProfileWithLabels":
		return true
	}
	return false
}

// typesOf lists sample types as "type/unit".
func typesOf(sum *pprofio.Summary) string {
	var b strings.Builder
	for i, st := range sum.SampleTypes {
		if i > 0 {
			b.WriteString(", ")
		}
		if st.Type == "" && st.Unit == "" {
			b.WriteString("(unnamed)")
			continue
		}
		b.WriteString(st.Type + "/" + st.Unit)
	}
	return b.String()
}
