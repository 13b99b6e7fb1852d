#!/usr/bin/env bash
# run.sh measures what memdoctor watch costs a Go service it reads from its memory (no pprof
# endpoint, no agent): an idle service with a 200 MiB live heap (bench/memreadcost/target),
# watched by PID with the default --sample 1s and --interval 10s.
#
# The target's CPU time is the sum of its threads' run time (/proc/PID/task/*/schedstat, in
# nanoseconds), taken over SECONDS unwatched and then over SECONDS watched; the difference is
# what watching costs it. memdoctor's own CPU time and peak RSS come from GNU time; how long
# each heap profile took to read and how long the target was stopped for its goroutines come
# from the session's notes.
#
#   bench/memreadcost/run.sh [SECONDS]    default 60
set -euo pipefail
secs=${1:-60}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/target" ./bench/memreadcost/target
go build -o "$tmp/memdoctor" ./cmd/memdoctor

"$tmp/target" -heap-mib 200 > "$tmp/target.out" &
pid=$!
for _ in $(seq 100); do grep -q ready "$tmp/target.out" && break; sleep 0.2; done
grep -q ready "$tmp/target.out" || { echo "the target never said ready" >&2; exit 1; }
sleep 2

runns() { cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {printf "%d\n", s}'; }

c0=$(runns)
sleep "$secs"
c1=$(runns)
/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" \
	"$tmp/memdoctor" watch --source memory --duration "${secs}s" --out "$tmp/session" "$pid" > "$tmp/watch.out" 2>&1
c2=$(runns)
kill -0 "$pid" || { echo "the target died while watched" >&2; exit 1; }

read -r wall user sys maxrss < "$tmp/time"
awk -v idle=$((c1 - c0)) -v watched=$((c2 - c1)) -v secs="$secs" -v wall="$wall" -v user="$user" -v sys="$sys" -v rss="$maxrss" 'BEGIN {
	printf "target (200 MiB live heap, idle), %d s each:\n", secs
	printf "  CPU unwatched: %.2f ms/s (%.4f%% of a core)\n", idle / 1e6 / secs, idle / 1e7 / secs
	printf "  CPU watched:   %.2f ms/s (%.4f%% of a core)\n", watched / 1e6 / wall, watched / 1e7 / wall
	printf "  cost of watching: %.4f%% of a core\n", watched / 1e7 / wall - idle / 1e7 / secs
	printf "memdoctor watch --source memory (--sample 1s, --interval 10s): %.2f s CPU over %.0f s (%.2f%% of a core, %.1f ms per 1 s sample), peak RSS %.1f MiB\n",
		user + sys, wall, (user + sys) * 100 / wall, (user + sys) * 1000 / wall, rss / 1024
}'
grep -o '"read [0-9]* heap profile[^"]*"' "$tmp/session/manifest.json" | sed 's/^/session: /'
grep -o '"stopped the process [^"]*"' "$tmp/session/manifest.json" | sed 's/^/session: /'
grep -c '"process-memory"' "$tmp/session/metrics.jsonl" | sed 's/^/session: Go samples read from memory: /'
