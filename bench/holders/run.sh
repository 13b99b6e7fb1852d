#!/usr/bin/env bash
# bench/holders: how long memdoctor holders stops a process, how long it takes, and how much
# memory it takes itself, on heaps of a chosen size and number of objects
# (cmd/memdoctor/testdata/holders-target: records in a global map, a struct and its payload
# each; a payload of bytes, or with the p suffix a slice of pointers, which the walk reads
# whole). For each heap it runs memdoctor holders RUNS times under GNU time and prints the
# median and range of: the time the process was stopped (and the stop estimated before), the
# time the copy took (within the stop), the walk of the copy (roots, heap and naming, the process running), memdoctor's wall
# time and peak RSS, and that RSS against the heap read; and the machine's load average
# around the runs. With BASELINE set to another memdoctor binary (main's build), it runs that
# one too, alternating the two run by run on the same process, and prints both side by side.
# With goref's grf on PATH (github.com/cloudwego/goref), it times `grf attach` too.
#
# Usage: bench/holders/run.sh [OBJECTS:PAYLOAD_BYTES[p] ...]
#        (default: 1000000:96 5000000:96 10000000:160 10000000:160p 20000000:352 20000000:352p)
# Environment: RUNS (default 3), BASELINE (a memdoctor binary), TMPDIR (where the copy goes).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-3}
[ $# -gt 0 ] || set -- 1000000:96 5000000:96 10000000:160 10000000:160p 20000000:352 20000000:352p
[ -x /usr/bin/time ] || { echo "bench/holders needs GNU time (Debian's time package)"; exit 1; }

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/memdoctor" ./cmd/memdoctor
go build -o "$work/target" ./cmd/memdoctor/testdata/holders-target
builds=(new)
if [ -n "${BASELINE:-}" ]; then
	cp "$BASELINE" "$work/memdoctor-baseline"
	builds=(baseline new)
fi

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "-"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f (%.0f-%.0f)", m, a[1], a[NR]}'; }
load() { cut -d' ' -f1 /proc/loadavg; }

# one BUILD PID SITE: one reading; appends stopped, copy, walk, wall, rss, copied MiB to $work/BUILD.*
one() {
	local build=$1 pid=$2 site=$3 bin="$work/memdoctor" extra=(--max-stop 0)
	if [ "$build" = baseline ]; then
		bin="$work/memdoctor-baseline" extra=()
		# A baseline that bounds the stop is told not to: a loaded machine must not refuse it.
		"$bin" help holders 2>&1 | grep -q -- --max-stop && extra=(--max-stop 0)
	fi
	/usr/bin/time -v -o "$work/time" "$bin" holders "${extra[@]}" --site "$site" --json "$work/h.json" "$pid" >/dev/null 2>"$work/err" ||
		{ echo "memdoctor holders failed:"; cat "$work/err"; exit 1; }
	python3 - "$work/h.json" "$work/$build" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d["timing_ms"]; out = sys.argv[2]
vals = {"stops": d.get("stopped_ms", 0), "estimates": d.get("estimated_stop_ms", 0), "copies": t.get("copy", 0), "walks": t["roots"] + t["walk"] + t["name"],
        "copied": d.get("copied_bytes", 0) / 2**20}
for k, v in vals.items():
    open(out + "." + k, "a").write("%.1f\n" % v)
open(out + ".heap", "w").write("%d %d\n" % (d["heap"]["bytes"], d["heap"]["objects"]))
PY
	awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(k=1;k<=n;k++) s=s*60+t[k]; printf "%.0f\n", s*1000}' "$work/time" >>"$work/$build.walls"
	awk -F': ' '/Maximum resident set size/ {printf "%.0f\n", $2/1024}' "$work/time" >>"$work/$build.rss"
	load >>"$work/loads"
}

for spec in "$@"; do
	objects=${spec%%:*} payload=${spec##*:} args=() site=main.build shape="bytes"
	if [ "${payload%p}" != "$payload" ]; then
		payload=${payload%p} args=(-pointers) site=main.buildLinks shape="pointers"
	fi
	"$work/target" -objects "$objects" -size "$payload" -rate 524288 "${args[@]}" >"$work/target.out" &
	tpid=$!
	until grep -q ready "$work/target.out" 2>/dev/null; do sleep 0.2; done
	rm -f "$work"/baseline.* "$work"/new.* "$work/loads"
	for i in $(seq "$runs"); do
		for b in "${builds[@]}"; do one "$b" "$tpid" "$site"; done
	done
	read -r bytes objs <"$work/new.heap"
	mib=$((bytes >> 20))
	echo "== heap $mib MiB in $objs objects, payloads of $shape (holders-target -objects $objects -size $payload ${args[*]}), $runs runs each: median (range); load $(sort -n "$work/loads" | head -1)-$(sort -n "$work/loads" | tail -1)"
	for b in "${builds[@]}"; do
		echo "   $b:"
		echo "     stopped:          $(median <"$work/$b.stops") ms"
		if [ "$b" = new ]; then
			echo "     estimated stop:   $(median <"$work/$b.estimates") ms"
			echo "     copy (stopped):   $(median <"$work/$b.copies") ms, $(median <"$work/$b.copied") MiB copied"
			echo "     walk (running):   $(median <"$work/$b.walks") ms"
		fi
		echo "     memdoctor wall:   $(median <"$work/$b.walls") ms"
		echo "     memdoctor RSS:    $(median <"$work/$b.rss") MiB ($(awk -v m="$mib" '{printf "%.0f\n", $1*100/m}' "$work/$b.rss" | median)% of the heap read)"
	done
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
