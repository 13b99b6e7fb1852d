package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

var diffCmd = &command{
	name:    "diff",
	args:    "[flags] OLD NEW | SESSION_DIR",
	summary: "show what grew and what shrank between two heap or goroutine profiles, in the program's own code",
	help: `Diff compares two profiles of the same kind and shows what grew between them and what shrank,
attributed to the program's own code: the innermost frame outside the Go runtime and the
standard library, with the full stack alongside. OLD and NEW are profile files (anything go
tool pprof opens, and goroutine text dumps: ?debug=1 and ?debug=2) or session snapshots:
SESSION_DIR@N is the session's N-th periodic heap snapshot (negative N counts from the end). A
lone SESSION_DIR compares its first and last snapshots. The kind comes from the profiles'
content.

Heap profiles are compared by function and by line. With --type alloc_space the difference is
what was allocated between the two snapshots ("what got allocated just before the heap grew");
with inuse_space it is what is still held. Goroutine profiles are compared by site: the wait
state (debug=2 dumps record it) and the program's own frame where the goroutines wait, so that
a pile-up shows as one site that grows.`,
	examples: []string{
		"memdoctor diff old.pb.gz new.pb.gz",
		"memdoctor diff goroutine-1.pb.gz goroutine-2.pb.gz",
		"memdoctor diff --type alloc_space memdoctor-sessions/server-20261122T101500Z@3 memdoctor-sessions/server-20261122T101500Z@4",
		"memdoctor diff --json - ./session",
		"memdoctor diff --module github.com/acme/svc before.pb.gz after.pb.gz",
	},
}

func init() { diffCmd.run = runDiff }

// diffInput is one side of a diff: a heap profile, or a goroutine profile's groups.
type diffInput struct {
	name, module string
	kind         string // session.KindHeap or session.KindGoroutine
	p            *profile.Profile
	groups       []culprit.GoroutineGroup // goroutine text dumps, grouped as they are read
}

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(diffCmd, e)
	typ := fs.String("type", "inuse_space", "sample `TYPE` of heap profiles to compare: inuse_space, alloc_space, inuse_objects or alloc_objects")
	jsonOut := fs.String("json", "", "also write the diff as JSON to `FILE` (- for stdout; the text then goes to stderr)")
	top := fs.Int("top", 10, "show this many functions, lines or sites")
	module := fs.String("module", "", "the program's main module `PATH` (e.g. github.com/acme/svc): its frames are \"own code\" before third-party ones (default: from the session, else inferred from the profiles)")
	pos, err := parse(diffCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	typeSet := false
	fs.Visit(func(f *flag.Flag) { typeSet = typeSet || f.Name == "type" })
	if *top < 1 {
		return usagef("diff: --top %d: want at least 1 (the number of functions and lines to show)", *top)
	}
	switch *typ {
	case "inuse_space", "alloc_space", "inuse_objects", "alloc_objects":
	default:
		return usagef("diff: --type %q: want inuse_space, alloc_space, inuse_objects or alloc_objects", *typ)
	}
	var oldArg, newArg string
	switch len(pos) {
	case 1:
		oldArg, newArg = pos[0]+"@0", pos[0]+"@-1"
	case 2:
		oldArg, newArg = pos[0], pos[1]
	default:
		return usagef("diff: want OLD NEW (profiles or SESSION_DIR@N) or one SESSION_DIR")
	}
	opts := culprit.Options{MainModule: *module}
	old, err := loadProfileArg(oldArg, opts)
	if err != nil {
		return err
	}
	new, err := loadProfileArg(newArg, opts)
	if err != nil {
		return err
	}
	if old.kind != new.kind {
		return usagef("diff: %s is a %s profile and %s a %s profile: diff two profiles of the same kind", old.name, old.kind, new.name, new.kind)
	}
	if opts.MainModule == "" {
		opts.MainModule = cmp.Or(old.module, new.module)
	}
	text := e.stdout
	if *jsonOut == "-" {
		text = e.stderr
	}
	var v any
	if old.kind == session.KindGoroutine {
		if typeSet {
			return usagef("diff: --type applies to heap profiles; goroutine profiles have one sample type (goroutines)")
		}
		res, err := diffGoroutines(old, new, opts)
		if err != nil {
			return err
		}
		if err := report.GoroutineDiff(text, old.name, new.name, res, *top); err != nil {
			return err
		}
		v = struct {
			Old  string `json:"old"`
			New  string `json:"new"`
			Kind string `json:"kind"`
			*culprit.GoroutineDiff
		}{old.name, new.name, "goroutine", res}
	} else {
		res, err := culprit.Diff(old.p, new.p, *typ, opts)
		if err != nil {
			return fmt.Errorf("diff %s %s: %w", old.name, new.name, err)
		}
		if err := report.Diff(text, old.name, new.name, res, *top); err != nil {
			return err
		}
		v = struct {
			Old  string `json:"old"`
			New  string `json:"new"`
			Kind string `json:"kind"`
			*culprit.DiffResult
		}{old.name, new.name, "heap", res}
	}
	if *jsonOut == "" {
		return nil
	}
	return writeDiffJSON(e, *jsonOut, v)
}

// diffGoroutines compares two goroutine profiles by site.
func diffGoroutines(old, new diffInput, opts culprit.Options) (*culprit.GoroutineDiff, error) {
	groups := func(in diffInput) ([]culprit.GoroutineGroup, error) {
		if in.p == nil {
			return in.groups, nil
		}
		g, err := culprit.GroupGoroutineProfile(in.p, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.name, err)
		}
		return g, nil
	}
	og, err := groups(old)
	if err != nil {
		return nil, err
	}
	ng, err := groups(new)
	if err != nil {
		return nil, err
	}
	return culprit.DiffSites(og, ng), nil
}

// writeDiffJSON writes the diff as JSON to path ("-" = stdout), a file for the user alone.
func writeDiffJSON(e *env, path string, v any) error {
	if path == "-" {
		return json.NewEncoder(e.stdout).Encode(v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := createPrivate(path)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	return nil
}

// loadProfileArg loads a profile file (a goroutine text dump grouped as it is read), or
// SESSION_DIR@N, and says what kind of profile it is, from its content.
func loadProfileArg(arg string, opts culprit.Options) (diffInput, error) {
	if dir, idx, ok := strings.Cut(arg, "@"); ok {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			p, name, mod, err := loadSnapshot(dir, idx)
			return diffInput{name: name, module: mod, kind: session.KindHeap, p: p}, err
		}
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return diffInput{}, usagef("%s is a directory: give SESSION_DIR@N, or one SESSION_DIR alone", arg)
	}
	name := "profile " + arg
	data, err := pprofio.Default.ReadArgDataAs(name, arg) // a pipe too: diff <(curl ...)
	if err != nil {
		return diffInput{}, err
	}
	in := diffInput{name: arg}
	if pprofio.Sniff(data[:min(len(data), pprofio.SniffLen)]) == pprofio.FormatGoroutineText {
		in.kind = session.KindGoroutine
		in.groups, err = culprit.ParseGoroutineText(bytes.NewReader(data), opts)
		if err != nil {
			return in, fmt.Errorf("%s: %w", name, err)
		}
		return in, nil
	}
	in.p, err = pprofio.Default.ParseData(name, data)
	if errors.Is(err, pprofio.ErrNotProfile) {
		return in, fmt.Errorf("%w: give a heap or goroutine profile such as one saved from /debug/pprof/heap", err)
	}
	if err != nil {
		return in, err
	}
	in.module = culprit.MainModule(in.p)
	switch types := culprit.SampleTypes(in.p); {
	case hasSampleType(in.p, "goroutine", "goroutineleak") || len(in.p.SampleType) == 1 && in.p.SampleType[0].Type == "":
		in.kind = session.KindGoroutine
	case hasSampleType(in.p, "inuse_space", "alloc_space", "inuse_objects", "alloc_objects"):
		in.kind = session.KindHeap
	default:
		return in, fmt.Errorf("%s: neither a heap nor a goroutine profile (its sample types: %s): give heap, allocs or goroutine profiles", name, types)
	}
	return in, nil
}

// hasSampleType reports whether p has one of the sample types.
func hasSampleType(p *profile.Profile, types ...string) bool {
	for _, st := range p.SampleType {
		if st != nil && slices.Contains(types, st.Type) {
			return true
		}
	}
	return false
}

func loadSnapshot(dir, idx string) (*profile.Profile, string, string, error) {
	n, err := strconv.Atoi(idx)
	if err != nil {
		return nil, "", "", usagef("%s@%s: the snapshot index must be an integer (negative counts from the end)", dir, idx)
	}
	s, err := session.Open(dir)
	if err != nil {
		return nil, "", "", err
	}
	refs := s.ProfilesOf(session.KindHeap, true)
	if len(refs) == 0 {
		return nil, "", "", fmt.Errorf("session %s has no heap snapshots", dir)
	}
	i := n
	if i < 0 {
		i += len(refs)
	}
	if i < 0 || i >= len(refs) {
		return nil, "", "", usagef("%s@%d: the session has %d heap snapshots (0..%d, or -1 for the last)", dir, n, len(refs), len(refs)-1)
	}
	p, err := pprofio.Default.ReadFileAs("snapshot "+refs[i].Path, refs[i].Path)
	if err != nil {
		return nil, "", "", err
	}
	return p, refs[i].Path, s.Manifest.Target.MainModule, nil
}
