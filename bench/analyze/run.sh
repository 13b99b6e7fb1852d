#!/usr/bin/env bash
# Times memdoctor analyze on a folder of 360 heap profiles (one hour at 10 s), each made from a
# real profile of 5,061 samples (node_exporter's, testdata/profiles) in which one site leaks
# (bench/analyze/gen). Prints the verdict, then the wall time, CPU time and memdoctor's peak
# RSS: median and range of RUNS runs after a warm-up, timed with GNU time (Debian's `time`)
# or hyperfine (bench/measure.sh).
#
#   bench/analyze/run.sh [N] [STEP] [RUNS]      (default 360 10s 5)
#
# Targets: under 5 s and 200 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-360}
STEP=${2:-10s}
RUNS=${3:-5}
. bench/measure.sh
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

echo "== timing memdoctor analyze"
measure "$RUNS" "$WORK/memdoctor" analyze "$WORK/profiles"
