#!/usr/bin/env bash
# watch-rss.sh measures memdoctor's own memory while it watches a service: it starts a lab
# scenario, runs `memdoctor watch` on it for DURATION, samples memdoctor's VmRSS every 5 s,
# and prints the peak, the first and last minutes' averages, and every sample.
#
#   bench/watch-rss.sh [DURATION] [SCENARIO] [INTERVAL]    defaults: 10m healthy 10s
set -euo pipefail
duration=${1:-10m}
scenario=${2:-healthy}
interval=${3:-10s}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill $target_pid $watch_pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/memdoctor" ./cmd/memdoctor

"$tmp/memdoctor" lab run "$scenario" >"$tmp/lab.out" 2>&1 &
target_pid=$!
for _ in $(seq 50); do
	url=$(grep -o 'http://[^ ]*/debug/pprof/' "$tmp/lab.out" || true)
	[ -n "$url" ] && break
	sleep 0.2
done
[ -n "$url" ] || { echo "the scenario did not start"; cat "$tmp/lab.out"; exit 1; }

"$tmp/memdoctor" watch --duration "$duration" --interval "$interval" --out "$tmp/session" "$url" >"$tmp/watch.out" 2>&1 &
watch_pid=$!
echo "watching $scenario ($url) for $duration, snapshots every $interval; memdoctor pid $watch_pid"
echo "seconds rss_kib" >"$tmp/rss.txt"
start=$(date +%s)
while kill -0 "$watch_pid" 2>/dev/null; do
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$watch_pid/status" 2>/dev/null || true)
	[ -n "$rss" ] && echo "$(( $(date +%s) - start )) $rss" >>"$tmp/rss.txt"
	sleep 5
done
wait "$watch_pid" || true
awk 'NR > 1 {
	n++; t[n] = $1; r[n] = $2; if ($2 > peak) peak = $2
}
END {
	for (i = 1; i <= n; i++) { if (t[i] <= 60) { fs += r[i]; fn++ } if (t[i] >= t[n] - 60) { ls += r[i]; ln++ } }
	printf "samples %d, peak %.1f MiB, first minute %.1f MiB, last minute %.1f MiB\n", n, peak / 1024, fs / fn / 1024, ls / ln / 1024
}' "$tmp/rss.txt"
cat "$tmp/rss.txt" | tr '\n' ' ' | fold -w 120
echo
tail -3 "$tmp/watch.out"
