package recorder

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildProgram builds the Go program in dir (relative to this package, with the go build
// flags given) into the test's temporary directory and returns the executable's path.
func buildProgram(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	args := append(append([]string{"build"}, flags...), "-o", bin, dir)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	return bin
}

// startTestProgram starts bin with args, its stdin kept open until the test ends (when it is
// killed), and returns its pid and the first line it printed (its "ready" line).
func startTestProgram(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("%s printed nothing: it never said ready", filepath.Base(bin))
	}
	return cmd.Process.Pid, sc.Text()
}
