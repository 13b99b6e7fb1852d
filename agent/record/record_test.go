package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTornWriteRecovers(t *testing.T) {
	var a appendFile
	path := filepath.Join(t.TempDir(), "x.jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.f = f
	a.writeLine([]byte("{\"a\":1}\n"))
	f.WriteString(`{"torn":`) // what a short write leaves
	a.torn = true
	a.writeLine([]byte("{\"b\":2}\n"))
	f.Close()
	b, _ := os.ReadFile(path)
	if got, want := string(b), "{\"a\":1}\n{\"torn\":\n{\"b\":2}\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestCreateUnwritable(t *testing.T) {
	// A path under a regular file fails for everyone, root included.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	_, err := Create(filepath.Join(file, "s"), Manifest{})
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("Create under a file: %v", err)
	}
}

func TestProfileFileNames(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 6, 45, 12, 345e6, time.UTC)
	for _, tc := range []struct {
		kind, label, name string
	}{
		{KindHeap, "", "heap-20261122T064512.345Z.pb.gz"},
		{KindGoroutine, "", "goroutine-20261122T064512.345Z.pb.gz"},
		{KindGoroutineText, "", "goroutine-20261122T064512.345Z.txt"},
		{KindHeap, "before-heap-jump", "heap-20261122T064512.345Z-before-heap-jump.pb.gz"},
		{KindGoroutineLeak, "", "goroutineleak-20261122T064512.345Z.pb.gz"},
	} {
		name := ProfileFileName(tc.kind, t0, tc.label)
		if name != tc.name {
			t.Errorf("ProfileFileName(%s, %s) = %s, want %s", tc.kind, tc.label, name, tc.name)
		}
		ref, err := ParseProfileFileName(name)
		if err != nil || ref.Kind != tc.kind || ref.Label != tc.label || !ref.Time.Equal(t0) {
			t.Errorf("ParseProfileFileName(%s) = %+v, %v", name, ref, err)
		}
	}
	for _, bad := range []string{"heap.pb.gz", "cpu-20261122T064512.345Z.pb.gz", "heap-2026.pb.gz", "heap-20261122T064512.345Z.txt", "goroutineleak-20261122T064512.345Z.txt", "x"} {
		if _, err := ParseProfileFileName(bad); err == nil {
			t.Errorf("ParseProfileFileName(%s) succeeded", bad)
		}
	}
}

func FuzzParseProfileFileName(f *testing.F) {
	for _, s := range []string{"heap-20261122T064512.345Z.pb.gz", "goroutine-20261122T064512.345Z-x.txt", "goroutineleak-20261122T064512.345Z.pb.gz", "heap-.pb.gz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ref, err := ParseProfileFileName(name)
		if err != nil {
			return
		}
		if got := ProfileFileName(ref.Kind, ref.Time, ref.Label); got != name {
			t.Errorf("round trip %q -> %q", name, got)
		}
	})
}
