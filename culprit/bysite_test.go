package culprit

import (
	"testing"
)

// TestGroupBySiteRecursion: a leak site reached through a recursive walk at three depths is
// one site with the sum of the counts, represented by its largest member; another site stays
// apart.
func TestGroupBySiteRecursion(t *testing.T) {
	opts := Options{MainModule: "example.com/svc"}
	g := newGrouper(opts)
	leaf := frame{fn: "example.com/svc.(*walker).wait", file: "/src/walk.go", line: 42}
	walk := frame{fn: "example.com/svc.(*walker).walk", file: "/src/walk.go", line: 30}
	chanrecv := frame{fn: "runtime.chanrecv1", file: "/go/src/runtime/chan.go", line: 506}
	gopark := frame{fn: "runtime.gopark", file: "/go/src/runtime/proc.go", line: 460}
	start := frame{fn: "example.com/svc.start", file: "/src/main.go", line: 10}
	for depth, n := range []int{30, 50, 20} {
		frames := []frame{gopark, chanrecv, leaf}
		for range depth + 1 {
			frames = append(frames, walk)
		}
		frames = append(frames, start)
		g.add("chan receive", frames, start, false, n, 0, 0)
	}
	other := frame{fn: "example.com/svc.serve", file: "/src/serve.go", line: 7}
	g.add("IO wait", []frame{gopark, other}, start, false, 40, 0, 0)
	groups := g.result()
	if len(groups) != 4 {
		t.Fatalf("stack groups = %d, want 4", len(groups))
	}
	sites := GroupBySite(groups)
	if len(sites) != 2 {
		t.Fatalf("sites = %d, want 2: %+v", len(sites), sites)
	}
	top := sites[0]
	if top.Count != 100 || top.Members != 3 || top.Culprit.Function != leaf.fn || top.Culprit.Line != 42 {
		t.Errorf("top site = count %d, members %d, culprit %+v; want 100, 3, %s:42", top.Count, top.Members, top.Culprit, leaf.fn)
	}
	if len(top.Stack) != 3+2+1 { // the largest member (50) walked two levels deep
		t.Errorf("representative stack %v, want the largest member's (depth 2)", top.Stack)
	}
	if sites[1].Count != 40 || sites[1].Members != 1 {
		t.Errorf("second site = %+v", sites[1])
	}
}

// TestGroupBySiteRunning: goroutines that spin in one function (never parked) are caught at
// whatever line they were running, preempted or not: one site of the function, whatever the
// lines and runtime frames, with the largest member's line; goroutines blocked at two lines
// of one function stay two sites, and a stack without the runtime's frames says nothing of
// its state.
func TestGroupBySiteRunning(t *testing.T) {
	g := newGrouper(Options{MainModule: "example.com/svc"})
	spin := func(line int64) frame {
		return frame{fn: "example.com/svc.(*poller).follow", file: "/src/poll.go", line: line}
	}
	start := frame{fn: "example.com/svc.start", file: "/src/main.go", line: 10}
	preempt := frame{fn: "runtime.asyncPreempt", file: "/go/src/runtime/preempt_amd64.s", line: 46}
	nbrecv := frame{fn: "runtime.selectnbrecv", file: "/go/src/runtime/chan.go", line: 700}
	sleep := frame{fn: "time.Sleep", file: "/go/src/runtime/time.go", line: 300}
	g.add("", []frame{preempt, spin(109)}, start, false, 85, 0, 0)
	g.add("", []frame{nbrecv, spin(104)}, start, false, 39, 0, 0)
	g.add("", []frame{sleep, spin(109)}, start, false, 10, 0, 0)
	gopark := frame{fn: "runtime.gopark", file: "/go/src/runtime/proc.go", line: 460}
	chanrecv := frame{fn: "runtime.chanrecv1", file: "/go/src/runtime/chan.go", line: 506}
	g.add("", []frame{gopark, chanrecv, spin(120)}, start, false, 7, 0, 0)
	g.add("", []frame{gopark, chanrecv, spin(130)}, start, false, 5, 0, 0)
	sites := GroupBySite(g.result())
	if len(sites) != 4 {
		t.Fatalf("sites = %d, want 4 (one running, one unknown, two blocked): %+v", len(sites), sites)
	}
	if top := sites[0]; top.Count != 124 || top.Members != 2 || top.Culprit.Line != 109 || !Running(top.Stack) {
		t.Errorf("the running site = count %d, members %d, line %d; want 124, 2, 109", top.Count, top.Members, top.Culprit.Line)
	}
	if sites[1].Count != 10 || sites[2].Count != 7 || sites[3].Count != 5 || Running(sites[2].Stack) {
		t.Errorf("the other sites = %d, %d and %d, want 10 (in time.Sleep, no frame of the runtime), 7 and 5 apart", sites[1].Count, sites[2].Count, sites[3].Count)
	}
}

// TestRunning: which stacks show a goroutine running rather than blocked.
func TestRunning(t *testing.T) {
	for _, tc := range []struct {
		stack []string
		want  bool
	}{
		{[]string{"runtime.asyncPreempt2", "runtime.asyncPreempt", "main.spin"}, true},
		{[]string{"runtime.chanrecv", "runtime.selectnbrecv", "main.spin"}, true},
		{[]string{"time.Sleep", "main.poll"}, false}, // no frame of the runtime: a debug=1 dump's
		{[]string{"main.backend"}, false},
		{[]string{"runtime.goroutineProfileWithLabels", "runtime/pprof.writeRuntimeProfile"}, true},
		{[]string{"internal/poll.runtime_pollWait", "net/http.Serve", "main.main", "runtime.main"}, false},
		{[]string{"runtime/pprof.writeGoroutineStacks", "net/http/pprof.handler.ServeHTTP"}, false},
		{[]string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.wait"}, false},
		{[]string{"runtime.gopark", "time.Sleep", "main.poll"}, false},
		{[]string{"syscall.Syscall", "os.(*File).Read", "main.main"}, false},
		{[]string{"internal/runtime/syscall/linux.Syscall6", "syscall.RawSyscall6", "main.main"}, false},
		{[]string{"runtime.cgocall", "main._Cfunc_sleep"}, false},
		{nil, false},
	} {
		if got := Running(tc.stack); got != tc.want {
			t.Errorf("Running(%v) = %v, want %v", tc.stack, got, tc.want)
		}
	}
}
