package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"
)

// parseStat parses the text of /proc/PID/stat. btime is the boot time (from
// /proc/stat) that starttime is counted from; a zero btime leaves StartTime
// at the zero time.
//
// The comm field is in parentheses and may itself contain spaces, '(' and
// ')', so it runs from the first '(' to the last ')' of the line.
func parseStat(data []byte, btime time.Time) (Stat, error) {
	var st Stat
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return Stat{}, errors.New("no (comm) field")
	}
	var ok bool
	if st.PID, ok = parseInt(trimSpace(data[:open])); !ok {
		return Stat{}, fmt.Errorf("bad pid %q", data[:open])
	}
	st.Comm = string(data[open+1 : closing])

	// Fields after the comm, numbered from 0: state is field 3 of proc(5).
	const (
		fState      = 0
		fPPID       = 1
		fFlags      = 6
		fUTime      = 11
		fSTime      = 12
		fNumThreads = 17
		fStartTime  = 19
	)
	var utime, stime, start uint64
	rest := data[closing+1:]
	n := 0
	for ; n <= fStartTime; n++ {
		var f []byte
		if f, rest = nextField(rest); len(f) == 0 {
			break
		}
		switch n {
		case fState:
			if len(f) != 1 {
				return Stat{}, fmt.Errorf("bad state %q", f)
			}
			st.State = f[0]
		case fPPID:
			st.PPID, ok = parseInt(f)
		case fFlags:
			var v uint64
			v, ok = parseUint(f)
			ok = ok && v <= math.MaxUint32
			st.Flags = uint32(v)
		case fUTime:
			utime, ok = parseUint(f)
		case fSTime:
			stime, ok = parseUint(f)
		case fNumThreads:
			st.NumThreads, ok = parseInt(f)
		case fStartTime:
			start, ok = parseUint(f)
		default:
			continue
		}
		if !ok {
			return Stat{}, fmt.Errorf("bad field %d %q", n+3, f)
		}
	}
	if n <= fStartTime {
		return Stat{}, fmt.Errorf("only %d fields after comm, want at least %d", n, fStartTime+1)
	}
	st.UTime = ticks(utime)
	st.STime = ticks(stime)
	if !btime.IsZero() {
		st.StartTime = btime.Add(ticks(start))
	}
	return st, nil
}

// ticks converts USER_HZ clock ticks to a duration, saturating on overflow.
func ticks(n uint64) time.Duration {
	if n > uint64(1<<63-1)/uint64(tick) {
		return 1<<63 - 1
	}
	return time.Duration(n) * tick
}

// parseBtimeLine returns the boot time from the "btime N" line of /proc/stat;
// ok is false for any other line.
func parseBtimeLine(line []byte) (t time.Time, ok bool) {
	f, rest := nextField(line)
	if string(f) != "btime" {
		return time.Time{}, false
	}
	v, _ := nextField(rest)
	secs, ok := parseUint(v)
	if !ok || secs > 1<<40 {
		return time.Time{}, false
	}
	return time.Unix(int64(secs), 0), true
}
