package recorder

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

// The tests start helper processes from this very binary (TestMain, main_test.go): a Go
// service with a live heap of serviceHeap bytes, a reverse proxy, a service that embeds only
// the agent.

const serviceHeap = 96 << 20

// liveHeap is the helper service's heap, touched so that it is resident.
var liveHeap [][]byte

// runServiceHelper serves in mode on a loopback port, prints its URL on stdout and serves until its
// stdin closes (the test ended).
func runServiceHelper(mode, backend string) error {
	mux := http.NewServeMux()
	var h http.Handler = mux
	switch mode {
	case "service":
		for range serviceHeap >> 20 {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = byte(i)
			}
			liveHeap = append(liveHeap, b)
		}
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	case "proxy":
		u, err := url.Parse(backend)
		if err != nil {
			return err
		}
		h = httputil.NewSingleHostReverseProxy(u)
	case "agent":
		a, err := agent.Start(context.Background(), agent.WithSampleInterval(100*time.Millisecond))
		if err != nil {
			return err
		}
		mux.Handle("/debug/memdoctor/", a.Handler())
	default:
		return fmt.Errorf("unknown helper %q", mode)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(ln, h)
	fmt.Printf("http://%s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// helper is a running helper process.
type helper struct {
	pid int
	url string
}

// startHelper starts a helper process and waits for its URL; it ends with the test.
func startHelper(t *testing.T, mode, backend string) helper {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "MEMDOCTOR_RECORDER_BACKEND="+backend)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper %s: %v", mode, err)
	}
	return helper{pid: cmd.Process.Pid, url: strings.TrimSpace(line)}
}
