#!/usr/bin/env bash
# watchcost.sh measures what `memdoctor watch` with its defaults costs a big idle Go 1.27
# service: the target's CPU (utime+stime from /proc/PID/stat) over a watch of DURATION, less
# its CPU over as long idle, as a share of one core. The target (bench/scrapecost/target)
# holds a live heap of pointers (the GC scans all of it) and parked goroutines.
# Run it on a quiet machine: the target's CPU per request grows with the machine's load.
#
#   bench/scrapecost/watchcost.sh [DURATION] [TARGET FLAGS...]
#   default: 35s -goroutines 10000 -leaked 0 -heap-mib 200
set -euo pipefail
dur=${1:-35s}
shift || true
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(-goroutines 10000 -leaked 0 -heap-mib 200)
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
GOTOOLCHAIN=go1.27.0 go build -o "$tmp/target" ./bench/scrapecost/target
go build -o "$tmp/memdoctor" ./cmd/memdoctor
# GOGC=off: the target's own forced GC (every 2 minutes, about 0.4 s of CPU on this heap)
# would fall in one window and not the other; a goroutineleak fetch still runs a GC.
GOGC=off "$tmp/target" "${flags[@]}" >"$tmp/addr" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
addr=$(head -1 "$tmp/addr")
secs=${dur%s}
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; }
sleep 2 # let the start-up's GC settle
a=$(cpu)
sleep "$secs"
b=$(cpu)
"$tmp/memdoctor" watch --duration "$dur" --out "$tmp/session" "http://$addr/debug/pprof/" >"$tmp/watch.txt" 2>&1
c=$(cpu)
idle=$(awk -v x="$a" -v y="$b" -v t="$ticks" -v s="$secs" 'BEGIN{printf "%.3f", 100*(y-x)/t/s}')
watched=$(awk -v x="$b" -v y="$c" -v t="$ticks" -v s="$secs" 'BEGIN{printf "%.3f", 100*(y-x)/t/s}')
cost=$(awk -v i="$idle" -v w="$watched" 'BEGIN{printf "%.3f", w-i}')
leak=$(grep -o 'fetched the goroutineleak profile [0-9]* time' "$tmp/session/manifest.json" | grep -o '[0-9]*' || echo 0)
echo "target ${flags[*]}, Go 1.27, watch --duration $dur (defaults): idle ${idle}% of a core, watched ${watched}%, watch's cost ${cost}% of a core; goroutineleak fetches: ${leak}"
