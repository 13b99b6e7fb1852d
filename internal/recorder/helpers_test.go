package recorder

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// runHelper runs one of the helper programs the tests start as targets.
func runHelper(mode string, args []string) error {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	pidFile := fs.String("pidfile", "", "write the PIDs of the helper's processes here")
	child := fs.Bool("child", false, "this is the helper's own child")
	addr := fs.String("addr", "", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch mode {
	case "exit":
		os.Exit(3)
	case "gc":
		churn(time.Hour)
	case "brief":
		churn(2 * time.Second)
	case "stubborn":
		return stubborn(*pidFile, *child)
	case "serve":
		return serve(*addr)
	case "service", "proxy", "agent":
		return runServiceHelper(mode, os.Getenv("MEMDOCTOR_RECORDER_BACKEND"))
	}
	return errors.New("unknown helper mode " + mode)
}

var sink []byte

// churn allocates garbage, enough for a GC cycle every few milliseconds, for d.
func churn(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for range 64 {
			sink = make([]byte, 64<<10)
		}
		time.Sleep(time.Millisecond)
	}
}

func writePIDs(path string, pids ...int) error {
	s := ""
	for _, p := range pids {
		s += fmt.Sprintln(p)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// stubborn ignores SIGINT, SIGTERM and SIGHUP, starts a child that does the same (unless it
// is that child), writes the PIDs of both to pidFile, and makes garbage until killed.
func stubborn(pidFile string, child bool) error {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if !child {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c := exec.Command(exe, "-child")
		c.Env = os.Environ()
		if err := c.Start(); err != nil {
			return err
		}
		if err := writePIDs(pidFile, os.Getpid(), c.Process.Pid); err != nil {
			return err
		}
	}
	churn(time.Hour)
	return nil
}

// serve serves net/http/pprof on addr and makes garbage until killed.
func serve(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	go churn(time.Hour)
	return http.Serve(ln, mux)
}
