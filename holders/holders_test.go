package holders

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sample is a result as a reading of a leaking service might give it.
func sample() *Result {
	return &Result{
		Schema:  Schema,
		Target:  Target{Kind: "process", PID: 4242, Exe: "/srv/api", GoVersion: "go1.26.8", Arch: "amd64", Module: "example.com/api"},
		Stopped: 1210,
		Heap:    HeapSummary{Spans: 9000, Slots: 1_200_000, Objects: 1_100_000, Bytes: 412 << 20, Roots: 530, Goroutines: 48, Samples: 812, SampleRate: 512 << 10},
		Culprits: []Culprit{{
			Site: "example.com/api.(*store).remember", Samples: 800, Bytes: 400 << 20, Objects: 25600,
			GarbageSamples: 4, GarbageBytes: 2 << 20,
			Paths: []Path{
				{Root: Root{Kind: "global", Name: "example.com/api.sessions", Type: "map[string]*example.com/api.session"},
					Hops: []Hop{{Expr: "", Type: "map[string]*example.com/api.session"}, {Expr: "[value]", Type: "example.com/api.session"}, {Expr: ".body", Type: "[]uint8"}},
					Expr: "example.com/api.sessions[value].body", Samples: 700, Bytes: 350 << 20, Objects: 22400, Share: 0.875},
				{Root: Root{Kind: "goroutine", Name: "example.com/api.(*worker).run", Var: "pending", Wait: "chan receive", Type: "[]*example.com/api.job"},
					Hops: []Hop{{Expr: "[i]", Type: "example.com/api.job"}, {Expr: ".buf", Type: "[]uint8"}},
					Expr: "example.com/api.(*worker).run.pending[i].buf", Goroutines: []int64{17, 18, 19}, Samples: 96, Bytes: 48 << 20, Objects: 3072, Share: 0.12},
			},
			Covered: 0.995,
			Cuts: []Cut{{Expr: "example.com/api.sessions", Root: Root{Kind: "global", Name: "example.com/api.sessions", Type: "map[string]*example.com/api.session"},
				Hops:  []Hop{{Expr: "", Type: "map[string]*example.com/api.session"}},
				Field: "example.com/api.sessions", Type: "map[string]*example.com/api.session", Samples: 700, Bytes: 350 << 20, Share: 0.875,
				Frees: 351 << 20, FreesObjects: 23000}},
		}},
		Notes:  []string{"the \x1b[31mnote\x1b[0m a target sent"},
		Timing: Timing{Prepare: 120, Stop: 1, Roots: 40, Walk: 1100, Name: 60, Cuts: 200},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sample()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("a terminal escape a target sent reaches the terminal")
	}
	golden(t, "text.golden", b.Bytes())
}

// TestProfile: the profile's stacks are the paths, root at the bottom, site on top, and its
// totals are the paths' (with the unreachable samples).
func TestCutSaid(t *testing.T) {
	c := sample().Culprits[0].Cuts[0]
	if got, want := c.Said(), "cut example.com/api.sessions: frees 351.0 MiB (87.5% of the culprit)"; got != want {
		t.Errorf("Said() = %q, want %q", got, want)
	}
	c.Field = ""
	c.Expr = "main.m[value].\x1b[31mx"
	if got := c.Said(); !strings.HasPrefix(got, `cut main.m[value].\x1b[31mx: frees`) {
		t.Errorf("Said() = %q: want the path, escaped, when the cut has no field", got)
	}
}

func TestProfile(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	if err := r.Profile().Write(&b); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	var stacks []string
	for _, s := range p.Sample {
		total += s.Value[1]
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		stacks = append(stacks, strings.Join(names, " | "))
	}
	if want := int64(350<<20 + 48<<20 + 2<<20); total != want {
		t.Errorf("profile total %d, want %d", total, want)
	}
	want := "allocated by example.com/api.(*store).remember | .body ([]uint8) | [value] (example.com/api.session) |  (map[string]*example.com/api.session) [cut here: frees 368050176 bytes] | example.com/api.sessions"
	if stacks[0] != want {
		t.Errorf("first stack:\n%s\nwant\n%s", stacks[0], want)
	}
	if len(p.Comments) != 2 || p.Comments[1] != "example.com/api.(*store).remember: cut example.com/api.sessions: frees 368050176 bytes (88% of the culprit)" {
		t.Errorf("comments %q: want the cut after the header", p.Comments)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := Load(dir); ok || err != nil {
		t.Fatalf("an empty directory: ok %v, %v", ok, err)
	}
	r := sample()
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Load(dir)
	if !ok || err != nil {
		t.Fatalf("Load: %v %v", ok, err)
	}
	r.StoppedSeconds = 0
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, r)
	}
	for _, f := range []string{File, ProfileFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", f, err, st.Mode())
		}
	}
	os.WriteFile(filepath.Join(dir, File), []byte(`{"schema":"x"}`), 0o600)
	if _, _, err := Load(dir); err == nil {
		t.Error("a file of another schema loads")
	}
}
