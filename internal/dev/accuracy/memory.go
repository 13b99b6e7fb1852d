package accuracy

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memdoctor/memdoctor/lab"
)

// servingNoPprofRE finds a scenario's first line when it is built without profiling.
var servingNoPprofRE = regexp.MustCompile(`serving on http://\S+ \(no pprof\)`)

// recordMemory runs the scenario from the lab program built without profiling and watches it
// by PID (`memdoctor watch --enable-heap-profiling PID`) for as long as the other vantage
// points: the WatchMemory vantage point.
func recordMemory(ctx context.Context, cfg Config, sc lab.Scenario, vdir string, common, env []string) error {
	bin := cfg.LabNoPprof
	if sc.Expect.Go127 && cfg.LabNoPprofGo127 != "" {
		bin = cfg.LabNoPprofGo127
	}
	prog := exec.CommandContext(ctx, bin, sc.Name)
	prog.Env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, lab.AgentEnv+"=") })
	out, err := prog.StdoutPipe()
	if err != nil {
		return err
	}
	lw := &lineWriter{w: cfg.Log, prefix: sc.Name + "/" + string(WatchMemory) + "/lab: "}
	prog.Stderr = lw
	if err := prog.Start(); err != nil {
		return fmt.Errorf("start %s %s: %w", bin, sc.Name, err)
	}
	defer stopProgram(prog)
	ready := make(chan bool, 1)
	go func() {
		sent := false
		s := bufio.NewScanner(out)
		for s.Scan() {
			lw.Write([]byte(s.Text() + "\n"))
			if !sent && servingNoPprofRE.MatchString(s.Text()) {
				ready <- true
				sent = true
			}
		}
		if !sent {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			return fmt.Errorf("%s %s ended before serving", bin, sc.Name)
		}
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s %s never said it serves", bin, sc.Name)
	}
	args := append(append([]string{"watch", "--enable-heap-profiling"}, common...), "--out", vdir, strconv.Itoa(prog.Process.Pid))
	watch := exec.CommandContext(ctx, cfg.Memdoctor, args...)
	watch.Env = env
	w := &lineWriter{w: cfg.Log, prefix: sc.Name + "/" + string(WatchMemory) + ": "}
	watch.Stdout, watch.Stderr = w, w
	if err := watch.Run(); err != nil && !hasManifest(vdir) {
		return fmt.Errorf("memdoctor watch --enable-heap-profiling PID: %w", err)
	}
	if !hasManifest(filepath.Clean(vdir)) {
		return fmt.Errorf("memdoctor watch by PID left no session")
	}
	return nil
}

// stopProgram stops a scenario: SIGINT, then SIGKILL after 15 s.
func stopProgram(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
