package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestDiffBomb diffs a gzip bomb (1 GiB of zeros in 1 MiB): a one-line error naming the
// file and the limit, and a bounded cost (profile.Parse inflated it whole: 2.6 GiB of RSS).
func TestDiffBomb(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	bomb := filepath.Join(t.TempDir(), "heap.pb.gz")
	if err := os.WriteFile(bomb, bytes.Repeat(member.Bytes(), 16), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := runDiff(context.Background(), testEnv(&stdout, &stderr, nil), []string{bomb, bomb})
	runtime.ReadMemStats(&after)
	if want := "profile " + bomb + ": decompresses to more than 32 MiB: memdoctor refuses larger profiles"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q...", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("diff allocated %d MiB", alloc>>20)
	}
}

// TestDiffSanitizes diffs two profiles whose function and file names carry escape sequences
// (a window retitle, a screen clear): the output shows them escaped, never raw.
func TestDiffSanitizes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v int64) string {
		fns := []*profile.Function{
			{ID: 1, Name: "main.grow\x1b]0;pwned\x07", Filename: "/src/app/\x1b[2Jgrow.go"},
			{ID: 2, Name: "main.clear\x1b[2J", Filename: "/src/app/main.go"},
		}
		locs := []*profile.Location{
			{ID: 1, Line: []profile.Line{{Function: fns[0], Line: 3}}},
			{ID: 2, Line: []profile.Line{{Function: fns[1], Line: 9}}},
		}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
			Sample:     []*profile.Sample{{Location: locs, Value: []int64{v}}},
			Location:   locs, Function: fns,
		}
		path := filepath.Join(dir, name)
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old, new := write("old.pb.gz", 1<<20), write("new.pb.gz", 9<<20)
	var stdout, stderr bytes.Buffer
	if err := runDiff(context.Background(), testEnv(&stdout, &stderr, nil), []string{old, new}); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a raw escape reached the output:\n%q", out)
	}
	for _, want := range []string{`main.grow\x1b]0;pwned\a`, `main.clear\x1b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %s:\n%s", want, out)
		}
	}
}

// TestErrorLineSanitizes: the error line escapes what a target or a file name carried.
func TestErrorLineSanitizes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"diff", "/nonexistent/\x1b]0;pwned\x07.pb.gz", "/nonexistent/b.pb.gz"}, &stdout, &stderr)
	if code == 0 || strings.ContainsAny(stderr.String(), "\x1b\x07") || !strings.Contains(stderr.String(), `\x1b]0;pwned\a`) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
