//go:build linux

// Command hostile measures memdoctor's own peak memory on hostile inputs: gzip bombs (20
// GiB, 1 GiB, a forged trailer, gzipped twice), a valid profile dense with tiny samples, a
// huge but valid one, given to diff, analyze, report --html and serve, served by a fake
// pprof endpoint and a fake agent to watch. Each memdoctor runs under an address-space cap
// (-cap) so that an unbounded one fails instead of meeting the kernel's OOM killer, and under
// GNU time, which reports its peak RSS. It prints one Markdown table row per case: the exit
// status, the peak RSS, the wall time and memdoctor's message. It needs Linux, prlimit and
// /usr/bin/time; run it from the repository's root.
//
//	go run ./bench/hostile [-memdoctor BIN] [-cap BYTES] [-only SUBSTRING] [-keep DIR]
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("memdoctor", "", "the memdoctor binary to measure (default: build ./cmd/memdoctor)")
	capBytes := flag.Int64("cap", 8<<30, "address-space limit for each memdoctor run, in bytes (0: none)")
	only := flag.String("only", "", "run only the cases whose name contains this")
	validMiB := flag.Float64("valid-mib", 0, "raw size of the valid profile in MiB (default: the largest the limits accept)")
	keep := flag.String("keep", "", "make the inputs and sessions in this `DIR` and keep them (default: a temporary one, removed)")
	flag.Parse()
	if err := run(*bin, *capBytes, *only, *validMiB, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

// result of one memdoctor run.
type result struct {
	exit    int
	peakKiB int64
	wall    time.Duration
	stdout  string
	stderr  string
	extra   string
}

func run(bin string, capBytes int64, only string, validMiB float64, keep string) error {
	dir := keep
	if dir == "" {
		d, err := os.MkdirTemp("", "hostile")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if bin == "" {
		bin = filepath.Join(dir, "memdoctor")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/memdoctor").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	ins, err := makeInputs(dir, validMiB)
	if err != nil {
		return err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	type tcase struct {
		name, input string
		run         func() (result, error)
	}
	mdRun := func(args ...string) func() (result, error) {
		return func() (result, error) { return memdoctor(bin, capBytes, args...) }
	}
	var cases []tcase
	for _, in := range []string{"bomb-20g.pb.gz", "bomb-1g.pb.gz", "bomb-forged.pb.gz", "bomb-twice.pb.gz", "dense-24m.pb.gz", "huge-valid.pb.gz", "over-limit.pb.gz", "real-loki.pb.gz"} {
		args := []string{"diff", p(in), p(in)}
		if in == "real-loki.pb.gz" { // it has alloc_objects only
			args = []string{"diff", "--type", "alloc_objects", p(in), p(in)}
		}
		cases = append(cases, tcase{"diff " + in, ins[in].what, mdRun(args...)})
	}
	for _, in := range []string{"bomb-1g.pb.gz", "dense-24m.pb.gz", "huge-valid.pb.gz", "over-limit.pb.gz", "real-loki.pb.gz"} {
		sess := p("session-" + in)
		if err := makeSession(sess, p(in)); err != nil {
			return err
		}
		cases = append(cases,
			tcase{"analyze, session of " + in, "four heap snapshots: " + ins[in].what, mdRun("analyze", sess)},
			tcase{"report --html, session of " + in, "four heap snapshots: " + ins[in].what, mdRun("report", "--html", p("report-"+in+".html"), sess)},
			tcase{"serve + 4 pprof requests, session of " + in, "four heap snapshots: " + ins[in].what, func() (result, error) { return serve(bin, capBytes, sess, fourViews) }},
		)
	}
	trap := p("session-traps")
	if err := makeTrapSession(trap, p("real-loki.pb.gz")); err != nil {
		return err
	}
	const trapWhat = "a session of the Loki profile whose metrics.jsonl and a snapshot are links to /dev/zero, whose gctrace.log, a snapshot and a trace are named pipes"
	cases = append(cases,
		tcase{"analyze, session of traps", trapWhat, mdRun("analyze", trap)},
		tcase{"report --html, session of traps", trapWhat, mdRun("report", "--html", p("report-traps.html"), trap)},
		tcase{"serve + 4 pprof requests, session of traps", trapWhat, func() (result, error) { return serve(bin, capBytes, trap, fourViews) }},
	)
	sess := p("session-real-loki.pb.gz")
	cases = append(cases, tcase{"serve + 16 pprof requests (8 views twice), session of real-loki.pb.gz", "four heap snapshots: " + ins["real-loki.pb.gz"].what,
		func() (result, error) { return serve(bin, capBytes, sess, append(eightViews, eightViews...)) }})
	goroutine, _ := os.ReadFile("collect/pprofio/testdata/real/node_exporter_goroutine.pb.gz")
	for _, w := range []struct{ name, what string }{
		{"bomb-1g.pb.gz", "pprof heap endpoint serving the 1 GiB bomb"},
		{"dense-24m.pb.gz", "pprof heap endpoint serving the dense profile"},
		{"text", "pprof goroutine?debug=1 serving 250 MiB of text, chunked"},
	} {
		heap := gzipData(realistic(1 << 20)) // a small valid heap profile
		text := 0
		if w.name == "text" {
			text = 250 << 20
		} else {
			heap = ins[w.name].data
		}
		cases = append(cases, tcase{"watch, " + w.what, w.what, func() (result, error) {
			srv := pprofServer(heap, goroutine, text)
			defer srv.Close()
			return memdoctor(bin, capBytes, "watch", "--duration", "5s", "--interval", "2s", "--out", p("watch-"+w.name), srv.URL)
		}})
	}
	for _, in := range []string{"bomb-1g.pb.gz", "dense-24m.pb.gz"} {
		cases = append(cases, tcase{"watch, agent listing " + in, "fake agent serving " + ins[in].what, func() (result, error) {
			srv := agentServer(ins[in].data)
			defer srv.Close()
			return memdoctor(bin, capBytes, "watch", "--duration", "3s", "--out", p("agent-"+in), srv.URL+"/debug/memdoctor/")
		}})
	}
	fmt.Printf("memdoctor %s, address space capped at %d MiB\n\n", bin, capBytes>>20)
	fmt.Println("| case | input | exit | peak RSS | wall | message |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, c := range cases {
		if only != "" && !strings.Contains(c.name, only) {
			continue
		}
		r, err := c.run()
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		msg := message(r)
		peak := fmt.Sprintf("%.0f MiB", float64(r.peakKiB)/1024)
		if r.peakKiB < 0 {
			peak = "? (killed)"
		}
		fmt.Printf("| %s | %s | %d | %s | %.1fs | %s |\n", c.name, c.input, r.exit, peak, r.wall.Seconds(), msg)
	}
	return nil
}

// message picks the lines that say what happened to the hostile input: refusals, limits,
// failures, files skipped, serve's answers; else memdoctor's last line.
func message(r result) string {
	var lines []string
	last := ""
	for _, l := range strings.Split(r.stdout+"\n"+r.stderr+"\n"+r.extra, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		low := strings.ToLower(l)
		if strings.Contains(low, "refuse") || strings.Contains(low, "out of memory") || strings.Contains(low, "too large") ||
			strings.Contains(low, "decompress") || strings.Contains(low, "not a pprof") || strings.HasPrefix(l, "GET ") ||
			strings.HasPrefix(l, "hung:") || strings.Contains(low, "skipped (not a regular file") {
			lines = append(lines, l)
		} else if strings.HasPrefix(l, "memdoctor:") {
			last = l
		}
	}
	if len(lines) == 0 {
		lines = append(lines, last)
	}
	m := strings.Join(lines, " / ")
	if m == "" {
		return "(no error)"
	}
	if len(m) > 300 {
		m = m[:300] + "..."
	}
	return strings.ReplaceAll(m, "|", `\|`)
}

// command starts memdoctor args under the address-space cap, through GNU time, which
// writes its peak RSS to the file peak. (The rusage of a child started by os/exec is no use:
// it starts with a vfork that shares this process's memory, whose high-water mark the kernel
// keeps across exec.) It runs in its own process group, which stop signals.
func command(bin string, capBytes int64, peak string, args ...string) *exec.Cmd {
	argv := []string{"-f", "%M", "-o", peak}
	if capBytes > 0 {
		argv = append(argv, "prlimit", fmt.Sprintf("--as=%d", capBytes), "--")
	}
	cmd := exec.Command("/usr/bin/time", append(append(argv, bin), args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	return cmd
}

// stop sends SIGINT to cmd's process group (GNU time ignores it; memdoctor does not).
func stop(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// finish fills in r from the ended cmd and its peak file.
func finish(r *result, cmd *exec.Cmd, err error, peak string) error {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return err
	}
	r.exit = cmd.ProcessState.ExitCode()
	b, err := os.ReadFile(peak)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	_, err = fmt.Sscan(lines[len(lines)-1], &r.peakKiB)  // after "Command exited with non-zero status N"
	if err != nil && strings.Contains(r.extra, "hung") { // GNU time was killed with it
		r.peakKiB = -1
		return nil
	}
	return err
}

var peakFiles int

func peakFile() string {
	peakFiles++
	return filepath.Join(os.TempDir(), fmt.Sprintf("hostile-peak-%d-%d", os.Getpid(), peakFiles))
}

func memdoctor(bin string, capBytes int64, args ...string) (result, error) {
	peak := peakFile()
	defer os.Remove(peak)
	cmd := command(bin, capBytes, peak, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	hung := watchdog(cmd)
	err := cmd.Wait()
	r := result{wall: time.Since(start), stdout: stdout.String(), stderr: stderr.String(), extra: hung()}
	return r, finish(&r, cmd, err, peak)
}

// caseTimeout is how long one case may run before it is killed as hung.
const caseTimeout = 2 * time.Minute

// watchdog kills cmd's process group with SIGKILL if it runs past caseTimeout. The function
// it returns stops the watch, and says whether it fired.
func watchdog(cmd *exec.Cmd) func() string {
	var fired atomic.Bool
	t := time.AfterFunc(caseTimeout, func() {
		fired.Store(true)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return func() string {
		t.Stop()
		if fired.Load() {
			return fmt.Sprintf("hung: killed after %v", caseTimeout)
		}
		return ""
	}
}

// The pprof views serve is asked for: snapshot 0 three times and the diff of 0 and 1; or
// the eight views of four snapshots a cache of eight holds (each snapshot, four diffs).
var (
	fourViews  = []string{"/pprof/snap/0/", "/pprof/snap/0/", "/pprof/snap/0/", "/pprof/diff/0/1/"}
	eightViews = []string{"/pprof/snap/0/", "/pprof/snap/1/", "/pprof/snap/2/", "/pprof/snap/3/", "/pprof/diff/0/1/", "/pprof/diff/1/2/", "/pprof/diff/2/3/", "/pprof/diff/0/3/"}
)

// serve starts memdoctor serve on sess, asks for the views at paths in turn, then stops it
// with SIGINT.
func serve(bin string, capBytes int64, sess string, paths []string) (result, error) {
	peak := peakFile()
	defer os.Remove(peak)
	cmd := command(bin, capBytes, peak, "serve", "--addr", "127.0.0.1:0", sess)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	hung := watchdog(cmd)
	url, _ := bufio.NewReader(out).ReadString('\n')
	url = strings.TrimSuffix(strings.TrimSpace(url), "/")
	var log []string
	if url != "" {
		for _, path := range paths {
			t := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				log = append(log, fmt.Sprintf("GET %s: %v", path, err))
				cancel()
				break
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
			resp.Body.Close()
			cancel()
			first, _, _ := strings.Cut(string(body), "\n")
			if resp.StatusCode == http.StatusOK {
				first = "ok"
			}
			log = append(log, fmt.Sprintf("GET %s %d in %.2fs: %s", path, resp.StatusCode, time.Since(t).Seconds(), first))
		}
	}
	stop(cmd)
	err = cmd.Wait()
	r := result{wall: time.Since(start), stderr: stderr.String(), extra: strings.Join(append(log, hung()), "\n")}
	return r, finish(&r, cmd, err, peak)
}
