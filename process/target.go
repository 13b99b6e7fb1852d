package process

import (
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-delve/delve/pkg/proc"
)

// Errors that say why a process cannot be read. Each is wrapped with the process or file it is
// about; errors.Is finds them.
var (
	// ErrExited: the process is gone.
	ErrExited = errors.New("the process has exited")
	// ErrPermission: the kernel refused ptrace or /proc/PID/mem.
	ErrPermission = errors.New("no permission to read the process's memory: run memdoctor as root or as the process's user " +
		"with ptrace allowed (sysctl kernel.yama.ptrace_scope=0, or 1 with memdoctor started by the process's parent); " +
		"in a container grant CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE; kubectl debug --profile=general) " +
		"and share the process namespace")
	// ErrNotGo: the executable is not a Go program.
	ErrNotGo = errors.New("not a Go program (no Go build information in its executable)")
	// ErrUnsupportedGo: a Go release whose runtime memdoctor cannot read.
	ErrUnsupportedGo = errors.New("unsupported Go version")
	// ErrNoDWARF: the executable was built without debug information.
	ErrNoDWARF = errors.New("the executable has no DWARF debug information (built with -ldflags=-w or -s): " +
		"memdoctor reads the runtime's structures and names variables from it; rebuild without -s and -w " +
		"(the default go build keeps it), or give the unstripped executable of the same build")
	// ErrUnsupportedArch: an architecture memdoctor cannot read.
	ErrUnsupportedArch = errors.New("unsupported architecture")
)

// SupportedGo lists the Go releases whose runtime memdoctor reads.
var SupportedGo = []string{"go1.26", "go1.27"}

// SupportedArch lists the architectures memdoctor reads.
var SupportedArch = []string{"amd64", "arm64"}

// Target is one Go process seen from the outside: a live process or a core file with its
// executable. Its memory, Delve's view of its binary, goroutines and frames, and the runtime's
// own structures (see Runtime) are read through it.
type Target struct {
	Kind      string // "process" or "core"
	PID       int    // the live process's id, or the one the core names
	Exe       string // the executable read for symbols and types
	Core      string // the core file, for a core
	GoVersion string // e.g. "go1.26.8"
	Module    string // the main module's path, from the build information
	Arch      string // GOARCH
	Delve     *proc.Target
	grp       *proc.TargetGroup
	live      *live // nil for a core
	mem       *Memory
	regions   regions           // the readable address space; nil when unknown
	coreMem   proc.MemoryReader // a core's memory, while a copy of it is read instead
}

// Memory is the target's memory.
func (t *Target) Memory() *Memory { return t.mem }

// Stop stops a live process (every thread) so that what is read is consistent; for a core it
// does nothing. Pair it with Resume; Close resumes too.
func (t *Target) Stop() error {
	if t.live == nil {
		return nil
	}
	if err := t.live.stop(); err != nil {
		return err
	}
	t.Delve.ClearCaches()
	if err := t.refreshRegions(); err != nil {
		t.Resume()
		return err
	}
	return nil
}

// Resume lets a stopped live process run again and returns how long it was stopped (zero for
// a core or a process that was not stopped). It never fails: a thread that cannot be detached
// is gone.
func (t *Target) Resume() time.Duration {
	if t.live == nil {
		return 0
	}
	return t.live.resume()
}

// ReadCopy makes c, a copy of the process's memory taken while it was stopped, what every
// read of the target reads from now on: its Memory, and Delve's goroutines, frames and
// variables, with its threads as they were stopped. The process can then run again
// (Resume) while the copy is read. ReadCopy(nil), or the next Stop, reads the process again.
// A core already is a copy; a copy of it replaces what Memory reads (Delve's reads stay the
// core's): what shows that a copy holds all that a reading of the core needs.
func (t *Target) ReadCopy(c *Copy) {
	if t.live != nil {
		t.live.readCopy(c)
		t.Delve.ClearCaches()
		return
	}
	switch {
	case c != nil && t.coreMem == nil:
		t.coreMem, t.mem.r = t.mem.r, c
	case c != nil:
		t.mem.r = c
	case t.coreMem != nil:
		t.mem.r, t.coreMem = t.coreMem, nil
	}
}

// Thread is one stopped thread as a copy needs it: where its stack pointer and its thread
// pointer (TLS) are.
type Thread struct {
	TID     int
	SP, TLS uint64
}

// Threads lists the threads of a stopped process (or of the copy read), in thread-id order.
func (t *Target) Threads() []Thread {
	var out []Thread
	for _, th := range t.Delve.ThreadList() {
		regs, err := th.Registers()
		if err != nil {
			continue
		}
		out = append(out, Thread{TID: th.ThreadID(), SP: regs.SP(), TLS: regs.TLS()})
	}
	return out
}

// Close resumes the process if it is stopped and releases what the target holds.
func (t *Target) Close() error {
	if t.live != nil {
		t.live.close()
	}
	if t.grp != nil {
		// Detaching a core does nothing; the live process was resumed above.
		_ = t.Delve.BinInfo().Close()
	}
	return nil
}

// checkExecutable refuses what memdoctor cannot read, each with a one-line reason: not Go, an
// unsupported Go release or architecture, no DWARF.
func checkExecutable(path string) (goVersion, arch, module string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", "", err
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return "", "", "", fmt.Errorf("%s: not an ELF executable (%v): memdoctor reads Linux Go programs", path, err)
	}
	switch ef.Machine {
	case elf.EM_X86_64:
		arch = "amd64"
	case elf.EM_AARCH64:
		arch = "arm64"
	default:
		return "", "", "", fmt.Errorf("%s: %w %s (memdoctor reads %s)", path, ErrUnsupportedArch, ef.Machine, strings.Join(SupportedArch, ", "))
	}
	bi, err := buildinfo.Read(f)
	if err != nil {
		return "", arch, "", fmt.Errorf("%s: %w", path, ErrNotGo)
	}
	goVersion, module = bi.GoVersion, bi.Main.Path
	if !supportedGo(goVersion) {
		return goVersion, arch, module, fmt.Errorf("%s: built by %s: %w (memdoctor reads programs built by %s)",
			path, goVersion, ErrUnsupportedGo, strings.Join(SupportedGo, " and "))
	}
	if ef.Section(".debug_info") == nil && ef.Section(".zdebug_info") == nil {
		return goVersion, arch, module, fmt.Errorf("%s: %w", path, ErrNoDWARF)
	}
	return goVersion, arch, module, nil
}

// supportedGo says whether a version string (go1.26.8, go1.27rc1, go1.27.0 X:nogreenteagc) is
// of a release memdoctor reads.
func supportedGo(v string) bool {
	for _, s := range SupportedGo {
		if v == s || strings.HasPrefix(v, s+".") || strings.HasPrefix(v, s+"rc") || strings.HasPrefix(v, s+" ") || strings.HasPrefix(v, s+"-") {
			return true
		}
	}
	return false
}

// OpenCore opens a core file (gcore's, or the kernel's for a program run with
// GOTRACEBACK=crash) with the executable that made it.
func OpenCore(corePath, exePath string) (*Target, error) {
	goVersion, arch, module, err := checkExecutable(exePath)
	if err != nil {
		return nil, err
	}
	if err := checkCoreFile(corePath); err != nil {
		return nil, err
	}
	grp, err := openDelveCore(corePath, exePath)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the core with %s: %w", corePath, exePath, err)
	}
	t := &Target{Kind: "core", Exe: exePath, Core: corePath, GoVersion: goVersion, Module: module, Arch: arch, Delve: grp.Selected, grp: grp}
	t.PID = grp.Selected.Pid()
	t.mem = newMemory(grp.Selected.Memory())
	if t.regions, err = coreRegions(corePath); err != nil {
		return nil, err
	}
	t.mem.regions, t.mem.core = &t.regions, true
	return t, nil
}

// checkCoreFile refuses what is not an ELF core before Delve reads it.
func checkCoreFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var hdr [18]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || string(hdr[:4]) != elf.ELFMAG {
		return fmt.Errorf("%s: not an ELF core file", path)
	}
	if elf.Type(uint16(hdr[16])|uint16(hdr[17])<<8) != elf.ET_CORE {
		return fmt.Errorf("%s: an ELF file but not a core (give the core first, then the executable)", path)
	}
	return nil
}
