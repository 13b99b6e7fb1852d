package recorder

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/session"
)

// fakeAgent poses as a memdoctor agent. It serves Info, one sample per request, the listed
// profiles and traces (each body from blobs, by name) and no events.
type fakeAgent struct {
	profiles []wire.ProfileInfo
	traces   []wire.TraceInfo
	blobs    map[string][]byte
}

func (f *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/debug/memdoctor/")
	writeJSON := func(v any) { json.NewEncoder(w).Encode(v) }
	switch {
	case rest == "":
		writeJSON(wire.Info{Agent: "memdoctor", Version: wire.Version, GoVersion: "go1.26.0", Start: time.Now().Add(-time.Minute)})
	case rest == "metrics":
		writeJSON(session.Sample{Time: time.Now().UTC(), Go: &session.GoMem{Source: "runtime/metrics", HeapObjectsBytes: 1 << 20}})
	case rest == "profiles":
		writeJSON(f.profiles)
	case rest == "traces":
		writeJSON(f.traces)
	case rest == "events":
		writeJSON([]wire.Event{})
	default:
		_, name, _ := strings.Cut(rest, "/")
		b, ok := f.blobs[name]
		if !ok {
			w.Header().Set("X-Memdoctor-Agent", "1")
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		w.Write(b)
	}
}

func heapProfileBytes(t *testing.T) []byte {
	t.Helper()
	fn := &profile.Function{ID: 1, Name: "main.f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1, 512, 1, 512}}},
		Location:   []*profile.Location{loc}, Function: []*profile.Function{fn},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWatchHostileAgent watches a server posing as an agent whose listing carries a label
// that climbs out of the session directory and trace names that do, and whose profiles
// include a gzip bomb and an HTML page: nothing is written outside the session, only the
// good profile is stored, and the notes name what was refused and why, once each.
func TestWatchHostileAgent(t *testing.T) {
	root := t.TempDir()
	t0 := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	escape := "x/" + strings.Repeat("../", 40) + strings.TrimPrefix(filepath.ToSlash(root), "/") + "/owned"
	prof := heapProfileBytes(t)
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 16) // 1 GiB in 1 MiB
	f := &fakeAgent{
		profiles: []wire.ProfileInfo{
			{Name: "heap-ok.pb.gz", Kind: session.KindHeap, Time: t0, Size: len(prof)},
			{Name: "owned.pb.gz", Kind: session.KindHeap, Time: t0, Label: escape, Size: len(prof)},
			{Name: "owned2.pb.gz", Kind: session.KindHeap, Time: t0, Label: "x/../../../../" + root + "/owned", Size: len(prof)},
			{Name: "bomb.pb.gz", Kind: session.KindHeap, Time: t0.Add(time.Second), Size: len(bomb)},
			{Name: "page.pb.gz", Kind: session.KindGoroutine, Time: t0.Add(time.Second), Size: 20},
		},
		traces: []wire.TraceInfo{
			{Name: "../../x.trace", Time: t0, Size: 5},
			{Name: "\x1b[2J.trace", Time: t0, Size: 5},
		},
		blobs: map[string][]byte{"heap-ok.pb.gz": prof, "owned.pb.gz": prof, "owned2.pb.gz": prof, "\x1b[2J.trace": []byte("trace"),
			"bomb.pb.gz": bomb, "page.pb.gz": []byte("<html>login</html>")},
	}
	srv := httptest.NewServer(f)
	defer srv.Close()

	cfg := watchConfig(t)
	cfg.Out = filepath.Join(root, "a", "b", "c", "session")
	if _, err := Watch(context.Background(), cfg, srv.URL+"/debug/memdoctor/"); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(path, cfg.Out+string(os.PathSeparator)) {
			t.Errorf("a file outside the session: %s", path)
		}
		return err
	})
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Profiles); n != 1 {
		t.Errorf("%d profiles stored, want the good one: %+v", n, s.Profiles)
	}
	if tr, _ := session.TraceFiles(cfg.Out); len(tr) != 0 {
		t.Errorf("traces stored: %v", tr)
	}
	notes := strings.Join(s.Manifest.Notes, "\n")
	for _, want := range []string{
		`refused the agent's profile "owned.pb.gz": profile label "x/../../`,
		`refused the agent's profile "owned2.pb.gz"`,
		`refused the agent's trace "../../x.trace"`,
		`refused the agent's trace "\x1b[2J.trace"`,
		`refused the agent's profile "bomb.pb.gz": response too large: profile "bomb.pb.gz": decompresses to more than 32 MiB`,
		`refused the agent's profile "page.pb.gz": not a pprof profile`,
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.ContainsRune(notes, 0x1b) {
		t.Errorf("a raw escape in the notes: %q", notes)
	}
	if c := strings.Count(notes, "refused the agent's"); c != 6 {
		t.Errorf("%d refusal notes, want 6 (each item once):\n%s", c, notes)
	}
}

// TestWatchStoresGoroutineText watches a net/http/pprof server: the goroutine dump is
// streamed into the session whole.
func TestWatchStoresGoroutineText(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := watchConfig(t)
	cfg.GoroutineTextEvery = 1 // a dump with every goroutine profile, the first's included
	if _, err := Watch(context.Background(), cfg, srv.URL); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	texts := s.ProfilesOf(session.KindGoroutineText, true)
	if len(texts) == 0 {
		t.Fatalf("no goroutine dump stored: %+v", s.Profiles)
	}
	b, err := os.ReadFile(texts[0].Path)
	if err != nil || !bytes.HasPrefix(b, []byte("goroutine profile: total ")) || !bytes.Contains(b, []byte("TestWatchStoresGoroutineText")) {
		t.Errorf("the dump %s: %v, starts %q", texts[0].Path, err, b[:min(len(b), 40)])
	}
}

// TestWatchAgentTraceBounded watches an agent that lists a trace larger than a session
// stores (session.MaxTraceBytes) next to a small one: the small one is stored, the large
// one is refused once with a note, whatever the number of pulls, and never stored.
func TestWatchAgentTraceBounded(t *testing.T) {
	t0 := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	big := make([]byte, session.MaxTraceBytes+1)
	f := &fakeAgent{
		traces: []wire.TraceInfo{
			{Name: "trace-20261122T100000.000Z-big.trace", Time: t0, Size: len(big)},
			{Name: "trace-20261122T100001.000Z-small.trace", Time: t0, Size: 5},
		},
		blobs: map[string][]byte{"trace-20261122T100000.000Z-big.trace": big, "trace-20261122T100001.000Z-small.trace": []byte("trace")},
	}
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "-big.trace") {
			fetches.Add(1)
		}
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg := watchConfig(t)
	cfg.Duration = 3 * time.Second
	if _, err := Watch(context.Background(), cfg, srv.URL+"/debug/memdoctor/"); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := session.TraceFiles(cfg.Out)
	if len(tr) != 1 || !strings.HasSuffix(tr[0], "-small.trace") {
		t.Errorf("traces stored: %v, want the small one", tr)
	}
	notes := strings.Join(s.Manifest.Notes, "\n")
	if c := strings.Count(notes, `refused the agent's trace "trace-20261122T100000.000Z-big.trace"`); c != 1 || !strings.Contains(notes, "response too large: over 67108864 bytes") {
		t.Errorf("the large trace is refused in %d notes, want 1:\n%s", c, notes)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the large trace was fetched %d times, want once", n)
	}
}
