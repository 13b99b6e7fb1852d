// Command stubborn is a test target that will not stop: it ignores SIGINT, SIGTERM and
// SIGHUP, starts a child that does the same, writes both PIDs to the file given with
// -pidfile, and makes garbage until it is killed.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

var sink []byte

func main() {
	pidFile := flag.String("pidfile", "", "write the PIDs of this process and its child here")
	child := flag.Bool("child", false, "run as the child")
	flag.Parse()
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if !*child {
		c := exec.Command(os.Args[0], "-child")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "stubborn:", err)
			os.Exit(1)
		}
		s := fmt.Sprintf("%d\n%d\n", os.Getpid(), c.Process.Pid)
		if err := os.WriteFile(*pidFile+".tmp", []byte(s), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "stubborn:", err)
			os.Exit(1)
		}
		os.Rename(*pidFile+".tmp", *pidFile)
	}
	for {
		for range 64 {
			sink = make([]byte, 64<<10)
		}
		time.Sleep(time.Millisecond)
	}
}
