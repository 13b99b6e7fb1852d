package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/internal/pprofio"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

var diffCmd = &command{
	name:    "diff",
	args:    "[flags] OLD NEW | SESSION_DIR",
	summary: "show what grew between two heap profiles, by function and by line, in the program's own code",
	help: `Diff compares two heap profiles and shows what grew between them, by function and by line,
each attributed to the program's own code: the innermost frame outside the Go runtime and the
standard library, with the full stack alongside. OLD and NEW are profile files (anything go
tool pprof opens) or session snapshots: SESSION_DIR@N is the session's N-th periodic heap
snapshot (negative N counts from the end). A lone SESSION_DIR compares its first and last
snapshots. With --type alloc_space the difference is what was allocated between the two
snapshots ("what got allocated just before the heap grew"); with inuse_space it is what is
still held.`,
	examples: []string{
		"memdoctor diff old.pb.gz new.pb.gz",
		"memdoctor diff --type alloc_space memdoctor-sessions/server-20261122T101500Z@3 memdoctor-sessions/server-20261122T101500Z@4",
		"memdoctor diff --json - ./session",
		"memdoctor diff --module github.com/acme/svc before.pb.gz after.pb.gz",
	},
}

func init() { diffCmd.run = runDiff }

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(diffCmd, e)
	typ := fs.String("type", "inuse_space", "sample `TYPE` to compare: inuse_space, alloc_space, inuse_objects or alloc_objects")
	jsonOut := fs.String("json", "", "also write the diff as JSON to `FILE` (- for stdout; the text then goes to stderr)")
	top := fs.Int("top", 10, "show this many functions and lines")
	module := fs.String("module", "", "the program's main module `PATH` (e.g. github.com/acme/svc): its frames are \"own code\" before third-party ones (default: from the session, else unknown)")
	pos, err := parse(diffCmd, e, fs, args, true)
	if err != nil {
		return err
	}
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
	oldP, oldName, mod, err := loadProfileArg(oldArg)
	if err != nil {
		return err
	}
	newP, newName, mod2, err := loadProfileArg(newArg)
	if err != nil {
		return err
	}
	if mod == "" {
		mod = mod2
	}
	if *module != "" {
		mod = *module
	}
	res, err := culprit.Diff(oldP, newP, *typ, culprit.Options{MainModule: mod})
	if err != nil {
		return fmt.Errorf("diff %s %s: %w", oldName, newName, err)
	}
	text := e.stdout
	if *jsonOut == "-" {
		text = e.stderr
	}
	if err := report.Diff(text, oldName, newName, res, *top); err != nil {
		return err
	}
	if *jsonOut == "" {
		return nil
	}
	v := struct {
		Old string `json:"old"`
		New string `json:"new"`
		*culprit.DiffResult
	}{oldName, newName, res}
	if *jsonOut == "-" {
		return json.NewEncoder(e.stdout).Encode(v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := createPrivate(*jsonOut)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("--json %s: %w", *jsonOut, err)
	}
	return nil
}

// loadProfileArg loads a profile file, or SESSION_DIR@N. It returns the profile, a name to
// show, and the session's main module when known.
func loadProfileArg(arg string) (*profile.Profile, string, string, error) {
	if dir, idx, ok := strings.Cut(arg, "@"); ok {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return loadSnapshot(dir, idx)
		}
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return nil, "", "", usagef("%s is a directory: give SESSION_DIR@N, or one SESSION_DIR alone", arg)
	}
	p, err := pprofio.Default.ReadArgAs("profile "+arg, arg) // a pipe too: diff <(curl ...)
	if errors.Is(err, pprofio.ErrNotProfile) {
		return nil, "", "", fmt.Errorf("%w: give a heap profile such as one saved from /debug/pprof/heap", err)
	}
	if err != nil {
		return nil, "", "", err
	}
	return p, arg, "", nil
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
