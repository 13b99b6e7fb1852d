package memread

import "github.com/memdoctor/memdoctor/process"

// goalInputs is what the runtime's heap goal is computed from (gcControllerState).
type goalInputs struct {
	gcPercentGoal, sweepDistMinTrigger, triggered uint64
	memoryLimit                                   int64
	heapFree, heapAlloc, mappedReady, heapMarked  uint64
}

func (r *Reader) goalInputs(cv process.Value, heapAlloc uint64) goalInputs {
	c := func(name string) uint64 { return cv.U(r.st.ctrl.f[name]) }
	return goalInputs{
		gcPercentGoal: c("gcPercentHeapGoal.value"), sweepDistMinTrigger: c("sweepDistMinTrigger.value"), triggered: c("triggered"),
		memoryLimit: int64(c("memoryLimit.value")), heapFree: c("heapFree"), heapAlloc: heapAlloc, mappedReady: c("mappedReady.value"),
		heapMarked: c("heapMarked"),
	}
}

// The runtime's constants of the memory-limit goal (mgcpacer.go), the same in Go 1.26 and 1.27.
const (
	memoryLimitHeapGoalHeadroomPercent = 3
	memoryLimitMinHeapGoalHeadroom     = 1 << 20
	minRunway                          = 64 << 10
)

// heapGoal is gcControllerState.heapGoal (heapGoalInternal and memoryLimitHeapGoal in
// src/runtime/mgcpacer.go): the GOGC goal, or the memory limit's when smaller, moved up to keep
// the sweeper's minimum distance and a minimum runway past the point a cycle triggered at.
func heapGoal(in goalInputs) uint64 {
	goal := in.gcPercentGoal
	if lim := memoryLimitGoal(in); lim < goal {
		return lim
	}
	if in.sweepDistMinTrigger > goal {
		goal = in.sweepDistMinTrigger
	}
	if in.triggered != ^uint64(0) && goal < in.triggered+minRunway {
		goal = in.triggered + minRunway
	}
	return goal
}

func memoryLimitGoal(in goalInputs) uint64 {
	if in.memoryLimit < 0 {
		return in.heapMarked
	}
	limit := uint64(in.memoryLimit)
	mapped := max(in.mappedReady, in.heapFree+in.heapAlloc) // read apart: never below what they add up to
	nonHeap := mapped - in.heapFree - in.heapAlloc
	var overage uint64
	if mapped > limit {
		overage = mapped - limit
	}
	if nonHeap+overage >= limit {
		return in.heapMarked
	}
	goal := limit - (nonHeap + overage)
	headroom := max(goal/100*memoryLimitHeapGoalHeadroomPercent, memoryLimitMinHeapGoalHeadroom)
	if goal < headroom || goal-headroom < headroom {
		goal = headroom
	} else {
		goal -= headroom
	}
	return max(goal, in.heapMarked)
}
