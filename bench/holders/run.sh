#!/usr/bin/env bash
# bench/holders: how long memdoctor holders stops a process, and how much memory it takes, on
# heaps of a chosen size and number of objects (cmd/memdoctor/testdata/holders-target: records
# in a global map, a struct and its payload each). For each heap it runs memdoctor holders RUNS
# times under GNU time and prints the median and range of: the time the process was stopped
# (from the result), the stop per 100 MiB of heap and per million objects, memdoctor's wall
# time and peak RSS, and the RSS against the heap read. With goref's grf on PATH (github.com/
# cloudwego/goref), it times `grf attach` on the same process too, for comparison.
#
# Usage: bench/holders/run.sh [OBJECTS:PAYLOAD_BYTES ...]   (default: 1000000:96 5000000:96 10000000:160)
# Environment: RUNS (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-3}
[ $# -gt 0 ] || set -- 1000000:96 5000000:96 10000000:160
[ -x /usr/bin/time ] || { echo "bench/holders needs GNU time (Debian's time package)"; exit 1; }

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/memdoctor" ./cmd/memdoctor
go build -o "$work/target" ./cmd/memdoctor/testdata/holders-target

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "-"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f (%.0f-%.0f)", m, a[1], a[NR]}'; }

for spec in "$@"; do
	objects=${spec%%:*} payload=${spec##*:}
	"$work/target" -objects "$objects" -size "$payload" -rate 524288 >"$work/target.out" &
	tpid=$!
	until grep -q ready "$work/target.out" 2>/dev/null; do sleep 0.2; done
	: >"$work/stops" >"$work/walls" >"$work/rss" >"$work/heap"
	for i in $(seq "$runs"); do
		/usr/bin/time -v -o "$work/time" "$work/memdoctor" holders --site main.build --json "$work/h.json" "$tpid" >/dev/null 2>&1
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["stopped_ms"]); print(d["heap"]["bytes"], d["heap"]["objects"], file=sys.stderr)' "$work/h.json" >>"$work/stops" 2>"$work/heap"
		awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(k=1;k<=n;k++) s=s*60+t[k]; printf "%.0f\n", s*1000}' "$work/time" >>"$work/walls"
		awk -F': ' '/Maximum resident set size/ {printf "%.0f\n", $2/1024}' "$work/time" >>"$work/rss"
	done
	read -r bytes objs <"$work/heap"
	mib=$((bytes >> 20))
	echo "== heap $mib MiB in $objs objects (holders-target -objects $objects -size $payload), $runs runs: median (range)"
	echo "   stopped:          $(median <"$work/stops") ms"
	echo "   per 100 MiB:      $(awk -v m="$mib" '{printf "%.0f\n", $1*100/m}' "$work/stops" | median) ms"
	echo "   per million obj:  $(awk -v n="$objs" '{printf "%.0f\n", $1*1e6/n}' "$work/stops" | median) ms"
	echo "   memdoctor wall:   $(median <"$work/walls") ms"
	echo "   memdoctor RSS:    $(median <"$work/rss") MiB ($(awk -v m="$mib" '{printf "%.0f\n", $1*100/m}' "$work/rss" | median)% of the heap read)"
	if command -v grf >/dev/null 2>&1; then
		: >"$work/grf"
		for i in $(seq "$runs"); do
			/usr/bin/time -v -o "$work/time" grf attach "$tpid" -o "$work/grf.out" >/dev/null 2>&1 || true
			awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(k=1;k<=n;k++) s=s*60+t[k]; printf "%.0f\n", s*1000}' "$work/time" >>"$work/grf"
		done
		echo "   goref grf attach: $(median <"$work/grf") ms wall (the process is stopped throughout)"
	fi
	kill "$tpid"; wait "$tpid" 2>/dev/null || true
done
