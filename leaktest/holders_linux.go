package leaktest

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// holdersTimeout bounds the memdoctor holders run a failure starts.
const holdersTimeout = 2 * time.Minute

// prSetPtracer is prctl's PR_SET_PTRACER: with Yama's ptrace_scope 1, it names who may trace
// the calling process; naming the process itself lets its descendants do it.
const prSetPtracer = 0x59616d61

// runHolders runs `memdoctor holders --json FILE --site FN... PID` on this very process,
// letting its child trace it for the run, and reads what it wrote.
func runHolders(fns []string, test string) (*holdersResult, error) {
	bin, err := exec.LookPath("memdoctor")
	if err != nil {
		return nil, errors.New(installHint(fns))
	}
	if exe, err := os.Executable(); err == nil && !hasDWARF(exe) {
		return nil, fmt.Errorf("memdoctor holders reads the test binary's DWARF, and this one has none (plain go test links without it): "+
			"run the test again with -o, which keeps it (go test -o leak.test -run '%s' PACKAGE), or build it with go test -c and run the binary", runPattern(test))
	}
	dir, err := os.MkdirTemp("", "leaktest-holders-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "holders.json")
	args := []string{"holders", "--json", out}
	for _, fn := range fns {
		args = append(args, "--site", fn)
	}
	args = append(args, strconv.Itoa(os.Getpid()))
	// Let this process's descendants trace it while memdoctor runs (Yama's ptrace_scope 1
	// allows only ancestors otherwise), and take it back after.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPtracer, uintptr(os.Getpid()), 0); e == 0 {
		defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetPtracer, 0, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), holdersTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := lastLine(stderr.String())
		if ctx.Err() != nil {
			msg = "it took longer than " + holdersTimeout.String()
		}
		return nil, fmt.Errorf("memdoctor holders could not read this process (%s): %s", err, msg)
	}
	return readHoldersJSON(out)
}

// hasDWARF reports whether the executable carries debugging information.
func hasDWARF(exe string) bool {
	f, err := elf.Open(exe)
	if err != nil {
		return true // not ours to judge: let memdoctor say
	}
	defer f.Close()
	return f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
