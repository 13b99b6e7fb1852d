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
	if want := "profile " + bomb + ": decompresses to more than 64 MiB: memdoctor refuses larger profiles"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q...", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("diff allocated %d MiB", alloc>>20)
	}
}
