package procfs

import (
	"errors"
	"time"
)

// parseSchedstat reads /proc/PID/task/TID/schedstat: "run_ns wait_ns timeslices".
func parseSchedstat(b []byte) (run, wait time.Duration, err error) {
	f1, rest := nextField(b)
	f2, _ := nextField(rest)
	r, ok1 := parseUint(f1)
	w, ok2 := parseUint(f2)
	if !ok1 || !ok2 || r > 1<<62 || w > 1<<62 {
		return 0, 0, errors.New("schedstat: want two counts of nanoseconds")
	}
	return time.Duration(r), time.Duration(w), nil
}
