package pprofdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
)

// cycleLine is a gctrace line of cycle n at at seconds, with a clock time of 2 ms.
func cycleLine(n int, at float64, live int) string {
	return fmt.Sprintf("gc %d @%.3fs 1%%: 0.5+1.0+0.5 ms clock, 1.0+0.2/1.5/0.5+1.0 ms cpu, %d->%d->%d MB, %d MB goal, 0 MB stacks, 0 MB globals, 2 P",
		n, at, 2*live, 2*live, live, 2*live)
}

func writeLog(t *testing.T, lines []string, mtime time.Time) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// placed reads a log and returns the time of each cycle placed, by cycle number.
func placed(t *testing.T, path string) (*gcLog, map[int]time.Time, []time.Time) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := scanLog(path, filepath.Base(path), false, st.ModTime())
	if err != nil {
		t.Fatal(err)
	}
	at := map[int]time.Time{}
	var starts []time.Time
	err = lg.emit(func(tm time.Time, c gctrace.Cycle, r *gcRun, first bool) {
		at[c.N] = tm
		if first {
			starts = append(starts, r.start)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return lg, at, starts
}

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// TestLogTimed: with times on the lines, the program's start is the earliest line time less
// its offset and clock time, and each cycle sits at start + offset, however late the log
// stamped its line.
func TestLogTimed(t *testing.T) {
	var lines []string
	for i := 1; i <= 5; i++ {
		at := float64(i * 10)
		stamp := start.Add(time.Duration(at*float64(time.Second)) + 2*time.Millisecond + time.Duration(i%3)*time.Millisecond) // the log's delay
		lines = append(lines, stamp.Format(time.RFC3339Nano)+" "+cycleLine(i, at, 10*i))
		lines = append(lines, stamp.Format(time.RFC3339Nano)+" some program output")
	}
	lg, at, starts := placed(t, writeLog(t, lines, time.Now()))
	if len(starts) != 1 || !starts[0].Equal(start) {
		t.Fatalf("starts %v, want %v", starts, start)
	}
	if len(at) != 5 || !at[3].Equal(start.Add(30*time.Second)) {
		t.Errorf("cycles at %v", at)
	}
	if notes := lg.notes(); len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
}

// TestLogUntimed: without times, the last run ends when the file was last modified, and the
// notes say so; an earlier run cannot be placed and is left out, with a note.
func TestLogUntimed(t *testing.T) {
	mtime := start.Add(time.Hour)
	lines := []string{cycleLine(1, 1, 5), cycleLine(2, 2, 5), "GC forced", cycleLine(1, 0.5, 5), cycleLine(2, 10, 6), cycleLine(3, 20, 7), "gc 4 @21.0s garbage"}
	lg, at, starts := placed(t, writeLog(t, lines, mtime))
	if len(lg.runs) != 2 || !lg.runs[0].dropped || lg.runs[1].dropped {
		t.Fatalf("runs %+v", lg.runs)
	}
	wantStart := mtime.Add(-20*time.Second - 2*time.Millisecond)
	if len(starts) != 1 || !starts[0].Equal(wantStart) || !at[3].Equal(mtime.Add(-2*time.Millisecond)) || len(at) != 3 {
		t.Errorf("starts %v (want %v), cycles %v", starts, wantStart, at)
	}
	notes := strings.Join(lg.notes(), "\n")
	for _, want := range []string{"has no times on its lines", "2 cycle(s) of earlier runs", "skipped 1 unparsable gc line"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// TestLogRestartTimed: a timed log with two runs places both; the second's start is a
// restart.
func TestLogRestartTimed(t *testing.T) {
	restart := start.Add(10 * time.Minute)
	lines := []string{
		start.Add(time.Second).Format(time.RFC3339Nano) + " " + cycleLine(1, 0.998, 5),
		start.Add(5*time.Second).Format(time.RFC3339Nano) + " " + cycleLine(2, 4.998, 5),
		`{"log":"` + cycleLine(1, 1.998, 5) + `\n","stream":"stderr","time":"` + restart.Add(2*time.Second).Format(time.RFC3339Nano) + `"}`,
		`{"log":"` + cycleLine(2, 3.998, 5) + `\n","stream":"stderr","time":"` + restart.Add(4*time.Second).Format(time.RFC3339Nano) + `"}`,
	}
	_, at, starts := placed(t, writeLog(t, lines, time.Time{}))
	if len(starts) != 2 || !starts[0].Equal(start) || !starts[1].Equal(restart) {
		t.Errorf("starts %v, want %v and %v", starts, start, restart)
	}
	if len(at) != 2 { // cycle numbers repeat: the map holds the second run's
		t.Errorf("cycles %v", at)
	}
}

// FuzzGCLog: whatever a log holds, reading it never panics; within a run, cycles come in
// time order, and only runs placed in time are emitted.
func FuzzGCLog(f *testing.F) {
	f.Add([]byte(cycleLine(1, 1, 5) + "\n" + cycleLine(2, 2, 6) + "\n"))
	f.Add([]byte("2026-11-22T10:00:01Z " + cycleLine(1, 1, 5) + "\nGC forced\n2026-11-22T10:00:09Z " + cycleLine(1, 0.5, 5) + "\n"))
	f.Add([]byte(`{"log":"` + cycleLine(3, 9.5, 7) + `\n","time":"2026-11-22T10:00:10Z"}` + "\n" + cycleLine(4, 1e9, 1)))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp, err := os.CreateTemp(dir, "log")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(tmp.Name())
		tmp.Write(data)
		tmp.Close()
		lg, err := scanLog(tmp.Name(), "log", false, start)
		if err != nil {
			t.Fatal(err)
		}
		var prev time.Time
		var prevRun *gcRun
		err = lg.emit(func(tm time.Time, c gctrace.Cycle, r *gcRun, first bool) {
			if r.dropped {
				t.Errorf("a dropped run's cycle was emitted")
			}
			if r == prevRun && tm.Before(prev) {
				t.Errorf("cycle %d at %v, before the previous at %v", c.N, tm, prev)
			}
			prev, prevRun = tm, r
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
