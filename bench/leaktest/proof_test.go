package proof

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write each case's go.mod and go.sum again, through the module proxy")

const leaktestModule = "github.com/memdoctor/memdoctor/leaktest"

// leaktestDirMark stands for the working tree's leaktest directory in the stored go.mod files.
const leaktestDirMark = "LEAKTEST_DIR"

// The release that shipped each leak fails, naming the lines the fix changed.
func TestLeakingReleasesFail(t *testing.T) {
	for _, c := range cases {
		if c.leaking == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			out, err := goTest(t, c, c.leaking)
			if err == nil {
				t.Fatalf("%s@%s leaks (%s) and its test passed:\n%s", c.library, c.leaking, c.issue, out)
			}
			if !strings.Contains(out, "--- FAIL") || !strings.Contains(out, "leaktest: ") {
				t.Fatalf("%s@%s: the test did not fail through leaktest (%v):\n%s", c.library, c.leaking, err, out)
			}
			for _, w := range c.want {
				w = expandLines(t, c, w)
				if !strings.Contains(out, w) {
					t.Errorf("the failure does not say %q", w)
				}
			}
			t.Logf("%s@%s (%s):\n%s", c.library, c.leaking, verdictTime(out), out)
		})
	}
}

// The release that fixed each leak passes, and so does each healthy use of a library.
func TestFixedReleasesPass(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := goTest(t, c, c.fixed)
			if err != nil || !strings.Contains(out, "leaktest: no leak") {
				t.Fatalf("%s@%s (the fix of %s) failed (%v):\n%s", c.library, c.fixed, c.issue, err, out)
			}
			t.Logf("%s@%s (%s):\n%s", c.library, c.fixed, verdictTime(out), leaktestLines(out))
		})
	}
}

// goTest copies a case into a module of its own that requires the release, and runs its test.
func goTest(t *testing.T, c proofCase, release string) (string, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a module that requires a real library, fetched through the module proxy")
	}
	leaktestDir, err := filepath.Abs("../../leaktest")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), c.name) // the failure names files by their directory
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", c.name, "proof_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "proof_test.go"), src)
	modFile := filepath.Join("testdata", c.name, release+".mod")
	sumFile := filepath.Join("testdata", c.name, release+".sum")
	if *update {
		write(t, filepath.Join(dir, "go.mod"), []byte("module example.com/proof\n\ngo 1.25.0\n\nrequire "+leaktestModule+" v0.0.0\n\nreplace "+leaktestModule+" => "+leaktestDir+"\n"))
		goCmd(t, dir, "get", c.library+"@"+release)
		goCmd(t, dir, "mod", "tidy")
		mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
		sum, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
		write(t, modFile, bytes.ReplaceAll(mod, []byte(leaktestDir), []byte(leaktestDirMark)))
		write(t, sumFile, sum)
	}
	mod, err := os.ReadFile(modFile)
	if err != nil {
		t.Fatalf("%v: run go test ./bench/leaktest/... -update", err)
	}
	sum, err := os.ReadFile(sumFile)
	if err != nil {
		t.Fatalf("%v: run go test ./bench/leaktest/... -update", err)
	}
	write(t, filepath.Join(dir, "go.mod"), bytes.ReplaceAll(mod, []byte(leaktestDirMark), []byte(leaktestDir)))
	write(t, filepath.Join(dir, "go.sum"), sum)
	if out, err := command(dir, "mod", "download"); err != nil {
		if unreachable(out) {
			t.Skipf("the module proxy cannot be reached here:\n%s", out)
		}
		t.Fatalf("go mod download %s@%s: %v\n%s", c.library, release, err, out)
	}
	return command(dir, "test", "-count=1", "-v", ".")
}

// command runs the go command in dir as a module of its own, with its go.mod as it is.
func command(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// unreachable reports a go command's output that says the network failed.
func unreachable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "network is unreachable", "TLS handshake timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var lineOf = regexp.MustCompile(`\{line of ([^}]*)\}`)

// expandLines puts the line numbers of proof_test.go into a wanted text.
func expandLines(t *testing.T, c proofCase, w string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", c.name, "proof_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	return lineOf.ReplaceAllStringFunc(w, func(m string) string {
		text := lineOf.FindStringSubmatch(m)[1]
		for i, l := range strings.Split(string(src), "\n") {
			if strings.Contains(l, text) {
				return strconv.Itoa(i + 1)
			}
		}
		t.Fatalf("no line of %s/proof_test.go holds %q", c.name, text)
		return ""
	})
}

var measured = regexp.MustCompile(`(?:measured over|no leak in) [^\n]*\(([0-9.]+m?s)\)`)

// verdictTime is the test time leaktest reports until its verdict.
func verdictTime(out string) string {
	if m := measured.FindStringSubmatch(out); m != nil {
		return "verdict after " + m[1]
	}
	return "no time reported"
}

// leaktestLines are the lines of a test's output that leaktest wrote.
func leaktestLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "leaktest:") || strings.Contains(l, "within the time limit") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "\n")
}
