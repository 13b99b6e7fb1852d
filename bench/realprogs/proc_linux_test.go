package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopKillsStubbornGroup starts a shell that ignores SIGTERM and has a child; stop must
// end both, the way a program stuck in its leaked handlers must be ended.
func TestStopKillsStubbornGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	script := `trap "" TERM; sleep 300 & echo $! > ` + pidFile + `; wait`
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p, err := startProcess("/bin/sh", []string{"-c", script}, nil, dir, out)
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for child == 0 {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	p.stop(100 * time.Millisecond)
	if !p.exited() {
		t.Fatal("stop returned before the process exited")
	}
	// The child is reparented to init, which reaps it; give it the time to.
	for i := 0; i < 500 && alive(child); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Error("the program's child outlived stop")
	}
}
