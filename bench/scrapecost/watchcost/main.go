//go:build linux

// Command watchcost measures what `memdoctor watch` costs a service, as users run it: two
// copies of one target (bench/scrapecost/target) run at once, one watched and its twin not,
// so that the machine's load falls on both alike; what the watched one spends more than its
// twin over the watch is the cost of watching. Per run it prints, for each twin, its threads'
// CPU time (/proc/PID/task/*/schedstat), its GC cycles, what it allocated and its longest
// stop-the-world pauses (the target's own runtime/metrics, read at the window's start and end
// on SIGUSR1), the machine's load average, and memdoctor's own CPU time.
//
//	go run ./bench/scrapecost/watchcost -target BIN -memdoctor [NAME=]BIN [-memdoctor ...]
//	    [-duration 35s] [-runs 3] [-gogc off] [-settle 30s] [-probe 10s] [-- TARGET FLAGS...]
//
// The twins start together and the window opens -settle later, so that their periodic GC
// (two minutes after their start-up's last) falls inside a two-minute window rather than at
// its edge; both are probed alike every -probe (/healthz), as a service is by its load
// balancer: a Go process with nothing at all to do runs its periodic GC up to a minute late
// (its sysmon sleeps while every P is idle), and any request wakes it, so an unprobed idle
// twin GCs later than a watched one for reasons that have nothing to do with what is asked.
//
// With several -memdoctor builds each run watches a fresh pair of twins with each build in
// turn (paired A/B). bench/scrapecost/watchcost.sh builds the target with Go 1.27 and this
// tree's memdoctor.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type builds []build

type build struct{ name, path string }

func (b *builds) String() string { return fmt.Sprint(*b) }
func (b *builds) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok {
		name, path = filepath.Base(s), s
	}
	*b = append(*b, build{name, path})
	return nil
}

func main() {
	target := flag.String("target", "", "the target binary (bench/scrapecost/target, built with Go 1.27)")
	var mds builds
	flag.Var(&mds, "memdoctor", "a memdoctor binary to watch with, `[NAME=]PATH` (repeat for a paired A/B)")
	dur := flag.Duration("duration", 35*time.Second, "how long each watch lasts (--duration)")
	runs := flag.Int("runs", 3, "runs (each: a fresh pair of twins per memdoctor build)")
	gogc := flag.String("gogc", "", "GOGC for both twins (\"\": the default, 100; off: no GC but forced ones)")
	settle := flag.Duration("settle", 30*time.Second, "wait after the twins start, before the window: their 2-minute GC (after their start-up's) then falls inside a 2-minute window, not at its edge")
	probe := flag.Duration("probe", 10*time.Second, "probe both twins' /healthz this often, as a load balancer or the kubelet does (0: never; an idle Go process runs its 2-minute GC up to a minute late, any request wakes it)")
	extra := flag.String("watch-flags", "", "more flags for memdoctor watch, space-separated")
	keep := flag.String("keep", "", "keep each run's session under this directory")
	flag.Parse()
	if *target == "" || len(mds) == 0 {
		fmt.Fprintln(os.Stderr, "watchcost: -target BIN and -memdoctor BIN are required")
		os.Exit(2)
	}
	stopOnSignal()
	tflags := flag.Args()
	if len(tflags) == 0 {
		tflags = []string{"-goroutines", "10000", "-leaked", "0", "-heap-mib", "124"}
	}
	gc := *gogc
	if gc == "" {
		gc = "default (100)"
	}
	fmt.Printf("target %s, GOGC %s, watch --duration %s %s, %d run(s), twins settled %s, probed every %s\n", strings.Join(tflags, " "), gc, *dur, *extra, *runs, *settle, *probe)
	results := map[string][]result{}
	for i := range *runs {
		for _, md := range mds {
			watched := i % 2 // which twin is watched alternates
			res, err := once(*target, tflags, *gogc, md.path, *dur, *settle, *probe, watched, strings.Fields(*extra), keepDir(*keep, md.name, i))
			if err != nil {
				fmt.Fprintf(os.Stderr, "watchcost: run %d, %s: %v\n", i+1, md.name, err)
				os.Exit(1)
			}
			fmt.Printf("run %d %-8s %s\n", i+1, md.name, res)
			results[md.name] = append(results[md.name], res)
		}
	}
	for _, md := range mds {
		summarize(md.name, results[md.name])
	}
}

func keepDir(root, name string, i int) string {
	if root == "" {
		return ""
	}
	return filepath.Join(root, fmt.Sprintf("%s-%d", name, i+1))
}

// twin is one running copy of the target.
type twin struct {
	cmd     *exec.Cmd
	addr    string
	reports chan report
}

type report struct {
	GCAuto, GCForced                                                       uint64
	AllocBytes, LiveBytes, GoalBytes                                       uint64
	GCCPU, ScavengeCPU, UserCPU                                            float64
	PausesTotalGC, PausesTotalOther, PausesStoppingGC, PausesStoppingOther [][2]float64
	cpu                                                                    time.Duration // the threads' run time, from /proc
}

// running are the processes started, ended by stopOnSignal if the harness is interrupted.
var running sync.Map // *os.Process -> struct{}

// stopOnSignal kills every process the harness started when it is interrupted (SIGINT,
// SIGTERM), so that no twin outlives it.
func stopOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-c
		running.Range(func(p, _ any) bool {
			p.(*os.Process).Kill()
			return true
		})
		os.Exit(1)
	}()
}

func start(bin string, flags []string, gogc string) (*twin, error) {
	cmd := exec.Command(bin, flags...)
	cmd.Env = os.Environ()
	if gogc != "" {
		cmd.Env = append(cmd.Env, "GOGC="+gogc)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	running.Store(cmd.Process, struct{}{})
	t := &twin{cmd: cmd, reports: make(chan report, 4)}
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("the target said nothing: %w", err)
	}
	t.addr = strings.TrimSpace(line)
	go func() {
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				close(t.reports)
				return
			}
			var r report
			if json.Unmarshal(line, &r) == nil {
				t.reports <- r
			}
		}
	}()
	return t, nil
}

// read asks the target for its figures and reads its threads' run time.
func (t *twin) read() (report, error) {
	cpu, err := runTime(t.cmd.Process.Pid)
	if err != nil {
		return report{}, err
	}
	if err := t.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return report{}, err
	}
	select {
	case r, ok := <-t.reports:
		if !ok {
			return report{}, errors.New("the target exited")
		}
		r.cpu = cpu
		return r, nil
	case <-time.After(10 * time.Second):
		return report{}, errors.New("the target did not report")
	}
}

func (t *twin) stop() {
	t.cmd.Process.Kill()
	t.cmd.Wait()
	running.Delete(t.cmd.Process)
}

// runTime sums the run time of the process's threads (/proc/PID/task/*/schedstat, ns).
func runTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("process %d: no schedstat", pid)
	}
	var sum int64
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just ended
		}
		fs := strings.Fields(string(b))
		if len(fs) > 0 {
			n, _ := strconv.ParseInt(fs[0], 10, 64)
			sum += n
		}
	}
	return time.Duration(sum), nil
}

// side is what one twin did over the window.
type side struct {
	cpu                   time.Duration
	gcAuto, gcForced      uint64
	alloc                 uint64
	gcCPU                 float64
	maxOther, maxGC       float64 // the longest pause (total), seconds: the upper bound of its histogram bucket
	maxStopOther          float64 // the longest time to stop the world for a non-GC pause
	over5ms               float64 // pauses (GC's or not) whose bucket lies above 5 ms
	otherPauses, gcPauses float64
	live                  uint64
}

func diff(a, b report) side {
	s := side{cpu: b.cpu - a.cpu, gcAuto: b.GCAuto - a.GCAuto, gcForced: b.GCForced - a.GCForced,
		alloc: b.AllocBytes - a.AllocBytes, gcCPU: b.GCCPU - a.GCCPU, live: b.LiveBytes}
	var o5, g5 float64
	s.maxOther, s.otherPauses, o5 = histDiff(a.PausesTotalOther, b.PausesTotalOther)
	s.maxGC, s.gcPauses, g5 = histDiff(a.PausesTotalGC, b.PausesTotalGC)
	s.maxStopOther, _, _ = histDiff(a.PausesStoppingOther, b.PausesStoppingOther)
	s.over5ms = o5 + g5
	return s
}

// histDiff is the window's part of a cumulative histogram: the upper bound of its highest
// bucket that gained counts, how many it gained in all, and how many above 5 ms.
func histDiff(a, b [][2]float64) (maxUpper, n, over5 float64) {
	before := map[float64]float64{}
	for _, p := range a {
		before[p[0]] = p[1]
	}
	for _, p := range b {
		d := p[1] - before[p[0]]
		if d <= 0 {
			continue
		}
		n += d
		maxUpper = math.Max(maxUpper, p[0])
		if p[0] > 0.005 {
			over5 += d
		}
	}
	return maxUpper, n, over5
}

type result struct {
	window      time.Duration
	load        string
	watched     side
	twin        side
	mdCPU       time.Duration
	leakFetches int
	sources     string
}

func (r result) cost() float64 {
	return 100 * (r.watched.cpu - r.twin.cpu).Seconds() / r.window.Seconds()
}

func (r result) String() string {
	w, t, secs := r.watched, r.twin, r.window.Seconds()
	return fmt.Sprintf("load %s | cost %+.3f%% of a core (watched %.0f ms, twin %.0f ms over %.1f s) | GC cycles %d+%d forced vs %d+%d | allocated %.0f vs %.0f KiB/s | longest non-GC pause %s (stopping %s) vs %s, GC pause %s vs %s, pauses >5ms %0.f vs %0.f | memdoctor CPU %.0f ms | leak fetches %d",
		r.load, r.cost(), ms(w.cpu), ms(t.cpu), secs, w.gcAuto, w.gcForced, t.gcAuto, t.gcForced,
		float64(w.alloc)/1024/secs, float64(t.alloc)/1024/secs,
		dur(w.maxOther), dur(w.maxStopOther), dur(t.maxOther), dur(w.maxGC), dur(t.maxGC), w.over5ms, t.over5ms,
		ms(r.mdCPU), r.leakFetches) + "\n      the session says: " + r.sources
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func dur(s float64) string {
	if s == 0 {
		return "none"
	}
	return fmt.Sprintf("<=%.2fms", s*1000)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

var leakNote = regexp.MustCompile(`fetched the goroutineleak profile (\d+) time`)

func once(bin string, flags []string, gogc, md string, d, settle, probe time.Duration, watched int, extra []string, keep string) (result, error) {
	var twins [2]*twin
	for i := range twins {
		t, err := start(bin, flags, gogc)
		if err != nil {
			return result{}, err
		}
		defer t.stop()
		twins[i] = t
	}
	if probe > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go probeTwins(twins, probe, stop)
	}
	time.Sleep(settle)
	load := loadavg()
	var before [2]report
	for i, t := range twins {
		r, err := t.read()
		if err != nil {
			return result{}, err
		}
		before[i] = r
	}
	t0 := time.Now()
	out := keep
	if out == "" {
		tmp, err := os.MkdirTemp("", "watchcost")
		if err != nil {
			return result{}, err
		}
		defer os.RemoveAll(tmp)
		out = filepath.Join(tmp, "session")
	} else if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return result{}, err
	}
	args := append([]string{"watch", "--duration", d.String(), "--out", out}, extra...)
	args = append(args, "http://"+twins[watched].addr+"/debug/pprof/")
	cmd := exec.Command(md, args...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &log
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	running.Store(cmd.Process, struct{}{})
	err := cmd.Wait()
	running.Delete(cmd.Process)
	if err != nil {
		return result{}, fmt.Errorf("memdoctor %s: %w\n%s", strings.Join(args, " "), err, log.String())
	}
	window := time.Since(t0)
	var after [2]report
	for i, t := range twins {
		r, err := t.read()
		if err != nil {
			return result{}, err
		}
		after[i] = r
	}
	res := result{window: window, load: load, watched: diff(before[watched], after[watched]), twin: diff(before[1-watched], after[1-watched])}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.mdCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if b, err := os.ReadFile(filepath.Join(out, "manifest.json")); err == nil {
		if m := leakNote.FindSubmatch(b); m != nil {
			res.leakFetches, _ = strconv.Atoi(string(m[1]))
		}
		var m struct {
			Costs []struct {
				Data, Source        string
				Reads               int
				TargetCPUSeconds    float64 `json:"target_cpu_seconds"`
				Stops               int
				LongestStopSeconds  float64 `json:"longest_stop_seconds"`
				Pauses              int
				LongestPauseSeconds float64 `json:"longest_pause_seconds"`
			}
		}
		if json.Unmarshal(b, &m) == nil {
			var parts []string
			for _, c := range m.Costs {
				p := fmt.Sprintf("%s from %s x%d %.1f ms", c.Data, c.Source, c.Reads, c.TargetCPUSeconds*1000)
				if c.Stops > 0 {
					p += fmt.Sprintf(" %d stop(s) <=%.2fms", c.Stops, c.LongestStopSeconds*1000)
				}
				if c.Pauses > 0 {
					p += fmt.Sprintf(" %d pause(s) <=%.2fms", c.Pauses, c.LongestPauseSeconds*1000)
				}
				parts = append(parts, p)
			}
			res.sources = strings.Join(parts, "; ")
		}
	}
	return res, nil
}

func summarize(name string, rs []result) {
	if len(rs) == 0 {
		return
	}
	var costs []float64
	var extraGC, maxPause float64
	for _, r := range rs {
		costs = append(costs, r.cost())
		extraGC += float64(r.watched.gcAuto+r.watched.gcForced) - float64(r.twin.gcAuto+r.twin.gcForced)
		maxPause = math.Max(maxPause, r.watched.maxOther)
	}
	slices.Sort(costs)
	fmt.Printf("%s: cost median %.3f%% of a core (range %.3f to %.3f) over %d run(s); GC cycles watched minus twin: %+.0f in all; longest non-GC pause of a watched twin %s\n",
		name, costs[len(costs)/2], costs[0], costs[len(costs)-1], len(rs), extraGC, dur(maxPause))
}

// probeTwins gets both twins' /healthz every d until stop is closed.
func probeTwins(twins [2]*twin, d time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(d)
	defer t.Stop()
	c := &http.Client{Timeout: d}
	for {
		for _, tw := range twins {
			if resp, err := c.Get("http://" + tw.addr + "/healthz"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
