#!/usr/bin/env bash
# run.sh measures how long `memdoctor watch --until-confirmed` takes to its verdict on a lab
# scenario that has been running a while before the watch attaches (a service already leaking),
# and what it asked of the service on the way: each round starts the scenario, waits ATTACH,
# runs the watch (its wall time is the time to verdict), prints the verdict's findings and the
# session's costs, and stops the scenario. With BASE=REV it also builds memdoctor at git
# revision REV and alternates the two builds round by round (a paired A/B on one machine).
#
#   bench/attach/run.sh SCENARIO [ROUNDS] [ATTACH] [WATCH FLAGS...]
#   bench/attach/run.sh span-queue-leak 3 60s --interval 5s
#   BASE=main bench/attach/run.sh webhook-leak 2 60s --interval 5s
set -euo pipefail
scenario=${1:?scenario}
rounds=${2:-3}
attach=${3:-60s}
shift $(($# < 3 ? $# : 3))
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--interval 5s)
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'kill "${lab:-0}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/this" ./cmd/memdoctor
builds=(this)
if [ -n "${BASE:-}" ]; then
	mkdir "$tmp/base"
	git archive "$BASE" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/base.bin" ./cmd/memdoctor)
	mv "$tmp/base.bin" "$tmp/basebin"
	builds=(basebin this)
fi
for round in $(seq 1 "$rounds"); do
	for b in "${builds[@]}"; do
		"$tmp/this" lab run "$scenario" >"$tmp/lab.out" 2>&1 &
		lab=$!
		url=""
		for _ in $(seq 1 100); do
			url=$(sed -n 's/.*serving pprof on \(http:[^ ]*\)\/debug\/pprof\/.*/\1/p' "$tmp/lab.out" | head -1)
			[ -n "$url" ] && break
			sleep 0.1
		done
		sleep "$attach"
		out="$tmp/s-$b-$round"
		start=$(date +%s.%N)
		"$tmp/$b" watch --until-confirmed "${flags[@]}" --out "$out" --json "$tmp/d.json" "$url" >/dev/null 2>"$tmp/watch.err" || true
		end=$(date +%s.%N)
		kill "$lab" && wait "$lab" 2>/dev/null || true
		name=$b
		[ "$b" = basebin ] && name="base ($BASE)"
		printf '%s round %d: %.1f s, load %s\n' "$name" "$round" "$(echo "$end - $start" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
		python3 - "$tmp/d.json" "$out/manifest.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d.get("findings", []):
    c = f["culprits"][0]["function"] if f.get("culprits") else "-"
    print("   %s/%s/%s %s" % (f["kind"], f["severity"], f["confidence"], c))
m = json.load(open(sys.argv[2]))
import datetime, os
def ts(s):
    s = s.rstrip("Z")
    if "." in s:
        a, b = s.split(".")
        s = a + "." + b[:6]
    return datetime.datetime.fromisoformat(s)
first = None
with open(os.path.join(os.path.dirname(sys.argv[2]), "metrics.jsonl")) as f:
    for line in f:
        if '"go":' in line:
            first = ts(json.loads(line)["t"])
            break
start, end = ts(m["start"]), ts(m["end"])
if first:
    print("   session %.1f s: first reading of the runtime %.1f s in, verdict %.1f s after it" % ((end - start).total_seconds(), (first - start).total_seconds(), (end - first).total_seconds()))
for c in m.get("costs", []):
    if c["data"] in ("heap-gc", "goroutineleak"):
        print("   asked: %s x%d, %.0f ms of its CPU" % (c["data"], c["reads"], 1000 * c.get("target_cpu_seconds", 0)))
PY
	done
done
