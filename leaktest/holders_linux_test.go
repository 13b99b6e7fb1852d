package leaktest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// With a memdoctor on PATH, the failure runs it, unless the test binary has no DWARF (plain go
// test), which it then says how to get; memdoctor's own error is passed on.
func TestHoldersRunsMemdoctor(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "memdoctor")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"memdoctor: holders: a fake memdoctor ($*)\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, err = runHolders([]string{"example.com/leaky.open"}, "TestSessions/one")
	if err == nil {
		t.Fatal("a failing memdoctor read the process")
	}
	want := []string{"has none", "go test -o leak.test -run '^TestSessions$/^one$'"}
	if hasDWARF(exe) { // built with -c or -o: the fake ran
		want = []string{"could not read this process", "a fake memdoctor (holders --json", "--site example.com/leaky.open " + strconv.Itoa(os.Getpid())}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}
