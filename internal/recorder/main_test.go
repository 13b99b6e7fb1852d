package recorder

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// helperEnv makes the test binary run a helper program (see helpers_test.go) instead of the
// tests: a Go program, as memdoctor's targets must be.
const helperEnv = "MEMDOCTOR_RECORDER_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperCommand is the command line that runs helper mode with args.
func helperCommand(t *testing.T, mode string, args ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, mode) // inherited by the program the recorder starts
	return append([]string{exe}, args...)
}

// helperCmd is an exec.Cmd that runs helper mode with args.
func helperCmd(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}
