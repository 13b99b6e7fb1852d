package modproxy

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPseudoVersion(t *testing.T) {
	ct := time.Date(2026, 11, 26, 14, 3, 9, 0, time.FixedZone("CET", 3600))
	v := PseudoVersion(ct, "0123456789abcdef0123456789abcdef01234567")
	if v != "v0.0.0-20261126130309-0123456789ab" {
		t.Fatalf("PseudoVersion = %s", v)
	}
	got, hash, err := ParsePseudoVersion(v)
	if err != nil || !got.Equal(ct) || hash != "0123456789ab" {
		t.Errorf("ParsePseudoVersion(%s) = %v, %s, %v", v, got, hash, err)
	}
	for _, bad := range []string{"v0.1.0", "v0.0.0-2026112613030-0123456789ab", "v0.0.0-20261126130309-0123456789AB", "v0.0.0-20261326130309-0123456789ab", "v0.0.0-20261126130309-0123456789a", "v1.0.0-20261126130309-0123456789ab", ""} {
		if _, _, err := ParsePseudoVersion(bad); err == nil {
			t.Errorf("ParsePseudoVersion(%q) accepted it", bad)
		}
	}
}

func FuzzParsePseudoVersion(f *testing.F) {
	for _, s := range []string{"v0.0.0-20261126130309-0123456789ab", "v0.0.0-00010101000000-000000000000", "v0.0.0--", "v1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ct, hash, err := ParsePseudoVersion(v)
		if err != nil {
			return
		}
		if again := PseudoVersion(ct, hash); again != v {
			t.Errorf("round trip %q -> %q", v, again)
		}
	})
}

// TestWrite publishes a module with a nested one and reads the proxy's files back.
func TestWrite(t *testing.T) {
	files := keep([]File{
		{"go.mod", []byte("module example.com/Big\n")},
		{"a.go", []byte("package big\n")},
		{"sub/b.go", []byte("package sub\n")},
		{"nested/go.mod", []byte("module example.com/Big/nested\n")},
		{"nested/c.go", []byte("package nested\n")},
		{"nestedness/d.go", []byte("package nestedness\n")},
	})
	dir := t.TempDir()
	when := time.Date(2026, 11, 26, 13, 3, 9, 0, time.UTC)
	for _, v := range []string{"v0.1.0", "v0.0.0-20261126130309-0123456789ab", "v0.2.0"} {
		if err := Write(dir, "example.com/Big", v, when, files); err != nil {
			t.Fatal(err)
		}
	}
	vdir := filepath.Join(dir, "example.com", "!big", "@v")
	list, err := os.ReadFile(filepath.Join(vdir, "list"))
	if err != nil || string(list) != "v0.1.0\nv0.2.0\n" {
		t.Errorf("@v/list = %q, %v; want the two tags, not the pseudo-version", list, err)
	}
	info, err := os.ReadFile(filepath.Join(vdir, "v0.1.0.info"))
	if err != nil || string(info) != `{"Version":"v0.1.0","Time":"2026-11-26T13:03:09Z"}` {
		t.Errorf(".info = %s, %v", info, err)
	}
	zr, err := zip.OpenReader(filepath.Join(vdir, "v0.1.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	want := []string{"example.com/Big@v0.1.0/a.go", "example.com/Big@v0.1.0/go.mod", "example.com/Big@v0.1.0/nestedness/d.go", "example.com/Big@v0.1.0/sub/b.go"}
	if !slices.Equal(names, want) {
		t.Errorf("zip holds %q, want %q (the nested module left out)", names, want)
	}
	if err := Write(dir, "example.com/x", "v0.1.0", when, files[1:2]); err == nil {
		t.Error("a module without go.mod was published")
	}
}
