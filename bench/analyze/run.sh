#!/usr/bin/env bash
# Times memdoctor analyze on a folder of 360 heap profiles (one hour at 10 s), each made from a
# real profile of 5,061 samples (node_exporter's, testdata/profiles) in which one site leaks
# (bench/analyze/gen). Prints the wall time and memdoctor's peak RSS (farm-bench: median of 5
# runs after a warm-up; /usr/bin/time when farm-bench is absent), and the verdict.
#
#   bench/analyze/run.sh [N] [STEP]      (default 360 10s)
#
# Targets: under 5 s and 200 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-360}
STEP=${2:-10s}
WORK=$(mktemp -d /tmp/memdoctor-analyze-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

echo "== building memdoctor and the generator"
go build -o "$WORK/memdoctor" ./cmd/memdoctor
go build -o "$WORK/gen" ./bench/analyze/gen

echo "== generating $N heap profiles, $STEP apart"
"$WORK/gen" -out "$WORK/profiles" -n "$N" -step "$STEP"
du -sh "$WORK/profiles" | awk '{printf "   %s on disk\n", $1}'

echo "== memdoctor analyze $WORK/profiles"
"$WORK/memdoctor" analyze "$WORK/profiles" | grep -E '^  (CRITICAL|WARNING|INFO)|culprit' | head -4

echo "== timing"
if command -v farm-bench >/dev/null 2>&1; then
	farm-bench -n 5 --timeout 600 -- "$WORK/memdoctor" analyze "$WORK/profiles"
else
	for i in 1 2 3; do
		/usr/bin/time -f "   %e s wall, %M KB peak RSS" "$WORK/memdoctor" analyze "$WORK/profiles" > /dev/null
	done
fi
