package leaktestproof

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/internal/dev/modproxy/modtest"
)

// TestHoldersInFailure runs a heap leak's test the way that shows who holds the memory: the
// test built with go test -c (plain go test leaves DWARF out, which memdoctor holders reads),
// the memdoctor command built from this working tree on PATH. The failure must carry the
// reference path from the package variable that keeps the leaked objects, which memdoctor
// read from the test's own process while the test waited.
func TestHoldersInFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memdoctor and a test binary, and reads the test's process")
	}
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("memdoctor holders reads live processes on linux/amd64 and linux/arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "memdoctor"), "./cmd/memdoctor")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/memdoctor: %v\n%s", err, out)
	}
	leaktestDir, err := filepath.Abs("../../../leaktest")
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(tmp, "leaky")
	modtest.Write(t, filepath.Join(mod, "go.mod"), "module example.com/leaky\n\ngo 1.25.0\n\nrequire "+leaktestModule+" v0.0.0\n\nreplace "+leaktestModule+" => "+leaktestDir+"\n")
	modtest.Write(t, filepath.Join(mod, "sessions.go"), `package leaky

type session struct {
	user  string
	trail []byte
}

var sessions = map[int]*session{}

// open keeps every session it opens: nothing ever closes one.
func open(id int, user string) *session {
	s := &session{user: user, trail: make([]byte, 200)}
	sessions[id] = s
	return s
}
`)
	modtest.Write(t, filepath.Join(mod, "sessions_test.go"), `package leaky

import (
	"testing"

	"github.com/memdoctor/memdoctor/leaktest"
)

func TestSessions(t *testing.T) {
	id := 0
	leaktest.Loop(t, func() {
		open(id, "ada")
		id++
	})
}
`)
	goTest := exec.Command("go", "test", "-c", "-o", filepath.Join(tmp, "leaky.test"), ".")
	goTest.Dir = mod
	goTest.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := goTest.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	run := exec.Command(filepath.Join(tmp, "leaky.test"), "-test.run", "^TestSessions$", "-test.v")
	run.Dir = mod
	run.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	outb, err := run.CombinedOutput()
	out := string(outb)
	t.Logf("the test's output:\n%s", out)
	if err == nil {
		t.Fatal("the leaking test passed")
	}
	for _, want := range []string{
		"the live heap keeps growing",
		"allocated under your code at leaky/sessions.go:12",
		"who holds it:",
		"example.com/leaky.sessions[value]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q", want)
		}
	}
}
