package process

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/go-delve/delve/pkg/proc"
)

// Attach prepares to read a live process: it checks the executable and loads its symbols and
// types while the process runs. Nothing is stopped until Stop.
func Attach(pid int) (*Target, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: not a process id", pid)
	}
	exe := "/proc/" + strconv.Itoa(pid) + "/exe"
	goVersion, arch, module, err := checkExecutable(exe)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrExited)
		}
		if os.IsPermission(err) {
			return nil, fmt.Errorf("process %d: %w (%v)", pid, ErrPermission, err)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	p, err := openLive(pid)
	if err != nil {
		return nil, err
	}
	p.bi = proc.NewBinaryInfo("linux", arch, true)
	grp, add := proc.NewGroup(liveGroup{p}, proc.NewTargetGroupConfig{StopReason: proc.StopAttached})
	tgt, err := add(p, pid, p.currentThread(), exe, proc.StopAttached, cmdline(pid))
	if err != nil {
		p.tr.close()
		p.mem.Close()
		return nil, fmt.Errorf("process %d: reading its executable's symbols and types: %w", pid, err)
	}
	p.iscgo = arch == "arm64" && tgt.IsCgo()
	path, _ := os.Readlink(exe)
	t := &Target{Kind: "process", PID: pid, Exe: path, GoVersion: goVersion, Module: module, Arch: arch, Delve: tgt, grp: grp, live: p}
	t.mem = newMemory(p)
	return t, nil
}

// refreshRegions reads the process's memory map: called once it is stopped, so that the map
// is the one its heap is read under.
func (t *Target) refreshRegions() error {
	if t.live == nil {
		return nil
	}
	ms, err := readMappings(t.PID)
	if err != nil {
		return err
	}
	t.regions = readableRegions(ms)
	if res := t.live.mem.res; res != nil {
		res.setMaps(ms)
	}
	return nil
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ")
}
