package memread_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/internal/dev/gotool"
)

// buildProfcycle builds testdata/profcycle with the toolchain ("" = the installed one).
func buildProfcycle(t *testing.T, toolchain string) string {
	t.Helper()
	if toolchain != "" {
		return gotool.Build(t, toolchain, ".", "./testdata/profcycle")
	}
	bin := filepath.Join(t.TempDir(), "profcycle")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/profcycle").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// toolchains runs f for the installed Go and for Go 1.27 (whose buckets count no bytes).
func toolchains(t *testing.T, f func(t *testing.T, toolchain string)) {
	for _, tc := range []string{"", gotool.Go127} {
		name := tc
		if name == "" {
			name = "installed"
		}
		t.Run(name, func(t *testing.T) { f(t, tc) })
	}
}

// say sends the target a command and returns its answer.
func (tg *target) say(t *testing.T, cmd string) string {
	t.Helper()
	fmt.Fprintln(tg.stdin, cmd)
	return tg.line(t)
}

// counts is what a heap profile counts for one site: allocations and frees.
type counts struct{ allocs, frees int64 }

// sites are the sites profcycle allocates from, as its memprofile command lists them.
var sites = []string{"main.siteA", "main.siteB", "main.site"}

// memProfile asks the target what its own runtime.MemProfile reports for each site.
func (tg *target) memProfile(t *testing.T) map[string]counts {
	t.Helper()
	f := strings.Fields(tg.say(t, "memprofile"))
	if len(f) != 1+2*len(sites) || f[0] != "memprofile" {
		t.Fatalf("target said %q to memprofile", f)
	}
	out := map[string]counts{}
	for i, s := range sites {
		a, _ := strconv.ParseInt(f[1+2*i], 10, 64)
		fr, _ := strconv.ParseInt(f[2+2*i], 10, 64)
		out[s] = counts{a, fr}
	}
	return out
}

// siteCounts sums each site's allocations and frees in a profile read at rate 1 (its values
// are the runtime's counts), by the samples' leaf function.
func siteCounts(p *profile.Profile) map[string]counts {
	out := map[string]counts{}
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			continue
		}
		fn := s.Location[0].Line[0].Function.Name
		c := out[fn]
		c.allocs += s.Value[0]
		c.frees += s.Value[0] - s.Value[2]
		out[fn] = c
	}
	return out
}

// TestHeapProfileFromTheFirstCycles reads the heap profile of a program whose sampling starts
// while it runs, as memdoctor's --enable-heap-profiling starts it, through its first GC
// cycles, and asks a twin of it, told the same, what its own runtime.MemProfile reports at the
// same points: they must be the same, site by site. Until a cycle with counts in it is
// published, runtime.MemProfile publishes every cycle for good; a reading that only showed
// them would later show a site's counts drop to 0 and come back (a database/sql program's
// OpenDB read 512 KiB, then 0, then 512 KiB).
func TestHeapProfileFromTheFirstCycles(t *testing.T) {
	toolchains(t, func(t *testing.T, tc string) {
		bin := buildProfcycle(t, tc)
		read, twin := start(t, bin), start(t, bin)
		r := open(t, read.pid)
		last := map[string]counts{}
		for i, step := range []string{"enable", "alloc a 100", "gc", "alloc b 50", "gc", "gc", "alloc a 10", "gc", "gc", "alloc b 5", "gc", "gc"} {
			for _, tg := range []*target{read, twin} {
				if l := tg.say(t, step); l != "done" {
					t.Fatalf("%s: target said %q", step, l)
				}
			}
			p, _, err := r.HeapProfile()
			if err != nil {
				t.Fatalf("after %q: %v", step, err)
			}
			got, want := siteCounts(p), twin.memProfile(t)
			for _, s := range sites[:2] {
				if got[s] != want[s] {
					t.Errorf("step %d (%s): %s read %+v, the twin's runtime.MemProfile %+v", i, step, s, got[s], want[s])
				}
				if got[s].allocs < last[s].allocs || got[s].frees < last[s].frees {
					t.Errorf("step %d (%s): %s went back from %+v to %+v", i, step, s, last[s], got[s])
				}
				last[s] = got[s]
			}
		}
		if last["main.siteA"].allocs != 110 || last["main.siteB"].allocs != 55 {
			t.Errorf("at the end: %+v, want 110 and 55 allocations published", last)
		}
	})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// TestHeapProfileAcrossFlushes reads the heap profile over and over while the program samples
// every allocation from main.site (through many stacks, each a bucket) and runs the GC in a
// loop, so that the runtime keeps publishing cycles (mProf_NextCycle, mProf_Flush,
// mProf_PostSweep) while they are read: main.site's counts must never go backwards from a
// reading to the next (what is published only grows), and once the program stops and
// publishes all, they must be what its own runtime.MemProfile says.
// MEMDOCTOR_FLUSH_READINGS, _PATHS and _PAUSE_US (between GCs) make it longer or harder.
func TestHeapProfileAcrossFlushes(t *testing.T) {
	toolchains(t, func(t *testing.T, tc string) {
		tg := start(t, buildProfcycle(t, tc))
		r := open(t, tg.pid)
		tg.say(t, "enable")
		readings := envInt("MEMDOCTOR_FLUSH_READINGS", 200)
		tg.say(t, fmt.Sprintf("race %d %d", envInt("MEMDOCTOR_FLUSH_PATHS", 256), envInt("MEMDOCTOR_FLUSH_PAUSE_US", 2000)))
		var last counts
		back, failed, retries, skipped := 0, 0, 0, 0
		var took time.Duration
		var bytes int64
		var err error
		for i := range readings {
			var p *profile.Profile
			var hr *memread.HeapReading
			if p, hr, err = r.HeapProfile(); err != nil {
				failed++
				continue
			}
			retries += hr.Retries
			skipped += hr.Skipped
			took += hr.Took
			bytes += hr.Bytes
			c := siteCounts(p)["main.site"]
			if c.allocs < last.allocs || c.frees < last.frees {
				if back++; back <= 5 {
					t.Errorf("reading %d: main.site %+v; it was %+v (%v)", i, c, last, hr)
				}
			}
			last = counts{max(c.allocs, last.allocs), max(c.frees, last.frees)}
		}
		if l := tg.say(t, "stop"); l != "done" {
			t.Fatalf("stop: target said %q", l)
		}
		want := tg.memProfile(t)["main.site"]
		p, _, err2 := r.HeapProfile()
		if err2 != nil {
			t.Fatal(err2)
		}
		got := siteCounts(p)["main.site"]
		ok := max(readings-failed, 1)
		t.Logf("%d readings: %d went backwards, %d failed (the last: %v), %d retries, %d buckets left out, %v and %d bytes a reading; at the end %+v, the runtime's %+v",
			readings, back, failed, err, retries, skipped, (took / time.Duration(ok)).Round(time.Microsecond), bytes/int64(ok), got, want)
		if back > 0 {
			t.Errorf("%d of %d readings of main.site's counts went backwards", back, readings)
		}
		if got != want || got.allocs == 0 {
			t.Errorf("after the race: main.site %+v read; runtime.MemProfile says %+v", got, want)
		}
		if failed > readings/2 {
			t.Errorf("%d of %d readings failed", failed, readings)
		}
	})
}
