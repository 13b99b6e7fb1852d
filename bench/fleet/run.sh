#!/usr/bin/env bash
# Times memdoctor fleet against a real Prometheus that holds one hour of 15 s scrapes of 200
# Go services (client_golang's default Go and process metrics), backfilled into its TSDB with
# promtool from what bench/fleet/gen writes. Prints what the fleet's verdicts were for each
# injected scenario, then the wall time, CPU time and memdoctor's peak RSS: median and range
# of RUNS runs after a warm-up, timed with GNU time (Debian's `time`) or hyperfine
# (bench/measure.sh).
#
#   bench/fleet/run.sh [TARGETS] [WINDOW] [RUNS]      (default 200 1h 5)
#
# Prometheus and promtool v0.310.0 are built once from their Go module into
# ${XDG_CACHE_HOME:-~/.cache}/memdoctor/prometheus-v0.310.0 (as .ci/run does; a few minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."

TARGETS=${1:-200}
WINDOW=${2:-1h}
RUNS=${3:-5}
. bench/measure.sh
PROM_VERSION=v0.310.0
PROM_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/memdoctor/prometheus-$PROM_VERSION"
WORK=$(mktemp -d /tmp/memdoctor-fleet-bench.XXXXXX)
PROM_PID=""
cleanup() {
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

for tool in prometheus promtool; do
	if [ ! -x "$PROM_DIR/$tool" ]; then
		echo "== building $tool $PROM_VERSION into $PROM_DIR"
		src=$(cd / && go mod download -json "github.com/prometheus/prometheus@$PROM_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
		mkdir -p "$PROM_DIR"
		(cd "$src" && GOWORK=off GOFLAGS=-mod=mod go build -o "$PROM_DIR/$tool.tmp" "./cmd/$tool")
		mv "$PROM_DIR/$tool.tmp" "$PROM_DIR/$tool"
	fi
done

echo "== building memdoctor and the generator"
go build -o "$WORK/memdoctor" ./cmd/memdoctor
go build -o "$WORK/gen" ./bench/fleet/gen

END=$(( $(date +%s) / 60 * 60 - 300 ))
echo "== generating $TARGETS targets x $WINDOW of 15 s scrapes, ending $(date -u -d @"$END" +%FT%TZ)"
"$WORK/gen" -targets "$TARGETS" -window "$WINDOW" -end "$END" > "$WORK/fleet.om"
ls -l "$WORK/fleet.om" | awk '{printf "   %d MB of OpenMetrics, %s\n", $5/1e6, ""}'
wc -l < "$WORK/fleet.om" | awk '{printf "   %d samples\n", $1}'

echo "== backfilling a TSDB with promtool"
/usr/bin/time -f "   %e s, %M KB peak" "$PROM_DIR/promtool" tsdb create-blocks-from openmetrics -q "$WORK/fleet.om" "$WORK/tsdb"
rm "$WORK/fleet.om"

echo "== starting Prometheus on the TSDB"
printf 'global:\n  scrape_interval: 15s\n' > "$WORK/prometheus.yml"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 19191)
"$PROM_DIR/prometheus" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--storage.tsdb.retention.time=30d --web.listen-address="127.0.0.1:$PORT" > "$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
URL="http://127.0.0.1:$PORT"
for _ in $(seq 300); do
	curl -fs "$URL/-/ready" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -fs "$URL/-/ready" >/dev/null || { tail -20 "$WORK/prometheus.log"; exit 1; }

ARGS=(fleet --prometheus "$URL" --end "$END" --window "$WINDOW")
echo "== memdoctor ${ARGS[*]}"
"$WORK/memdoctor" "${ARGS[@]}" --json "$WORK/fleet.json" > "$WORK/fleet.txt"
head -3 "$WORK/fleet.txt"
"$WORK/gen" -check "$WORK/fleet.json"

echo "== timing memdoctor ${ARGS[*]}"
measure "$RUNS" "$WORK/memdoctor" "${ARGS[@]}" --json /dev/null
