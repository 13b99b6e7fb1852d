// Package rsstest reads a process's resident anonymous memory for tests that check that
// memdoctor's reads of a process leave it as it was (Linux).
package rsstest

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
)

// Anon is the anonymous memory resident in process pid (RssAnon), in bytes.
func Anon(t testing.TB, pid int) int64 {
	t.Helper()
	st, err := procfs.FS{}.Status(pid)
	if err != nil {
		t.Fatal(err)
	}
	return int64(st.RssAnon)
}

// Settled waits until the process's anonymous memory stays the same for a quarter of a
// second (a program that just started, or gave memory back, settles), for ten seconds at
// most, and returns it.
func Settled(t testing.TB, pid int) int64 {
	t.Helper()
	last := Anon(t, pid)
	for range 40 {
		time.Sleep(250 * time.Millisecond)
		now := Anon(t, pid)
		if now == last {
			return now
		}
		last = now
	}
	return last
}

// Check fails t when process pid's anonymous memory grew from before by more than 1 MiB or
// 1%, whichever is more: what a reading of it may make it grow by (its own growth meanwhile
// included).
func Check(t testing.TB, pid int, before int64, what string) {
	t.Helper()
	after := Anon(t, pid)
	if grew := after - before; grew > max(1<<20, before/100) {
		t.Errorf("%s made process %d %d KiB bigger (RssAnon %d -> %d KiB)", what, pid, grew>>10, before>>10, after>>10)
	}
}
