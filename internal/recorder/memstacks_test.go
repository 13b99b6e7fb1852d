package recorder

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/leakcheck"
)

// TestMemStacksFollowASlowClimb replays the goroutine counts read from the memory of a slow
// goroutine leak (testdata/webhook-leak-memory-counts.tsv: 15 -> 54 in a minute) through the
// policy memLoop reads goroutine profiles by. Before, that was the goroutineleak fetch's (a
// climb of 50 and 20%): one profile in the minute, the start's, before any goroutine leaked,
// so the confirmed leak named no culprit. Now its stacks are read again as the goroutines
// climb: a second profile within the first half minute, and the leak's growth between the
// first and the last profile of the minute.
func TestMemStacksFollowASlowClimb(t *testing.T) {
	f, err := os.Open("testdata/webhook-leak-memory-counts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := &recorder{cfg: Config{LeakCheckEvery: DefaultLeakCheckEvery, leakMinGap: leakMinGap}}
	policy := r.memStacksPolicy()
	st := leakcheck.State{LastGoroutines: -1}
	var start time.Time
	var taken []time.Duration
	var counts []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		ts, n, _ := strings.Cut(sc.Text(), "\t")
		now, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatal(err)
		}
		g, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		if start.IsZero() {
			start = now
		}
		if now.Sub(start) > time.Minute {
			break
		}
		if st.LastGoroutines < 0 { // as memLoop does
			st.LastGoroutines = g
		}
		if policy.Due(st, now, g) != leakcheck.NotDue {
			st = leakcheck.State{Last: now, LastGoroutines: g}
			taken, counts = append(taken, now.Sub(start)), append(counts, g)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("goroutine profiles at %v, counting %v", taken, counts)
	if len(taken) < 3 || taken[1] > 30*time.Second {
		t.Fatalf("goroutine profiles at %v in the first minute: want a second within 30 s and a third", taken)
	}
	if grew := counts[len(counts)-1] - counts[0]; grew < 30 {
		t.Errorf("the profiles of the minute span a growth of %d goroutines, want the 30 a leak needs", grew)
	}
}
