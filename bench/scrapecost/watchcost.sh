#!/usr/bin/env bash
# watchcost.sh measures what `memdoctor watch` with its defaults costs a big idle Go 1.27
# service, as users run it: two copies of bench/scrapecost/target (124 MiB live heap of
# pointers, 10,000 parked goroutines, serving net/http/pprof and the goroutineleak profile)
# run at once, one watched and its twin not, so that the machine's load falls on both alike;
# the watched one's CPU (its threads' run time) less its twin's over the watch is the cost of
# watching, as a share of one core. Each run also prints both twins' GC cycles, allocations
# and longest stop-the-world pauses (their own runtime/metrics) and the load average
# (bench/scrapecost/watchcost, the harness).
#
#   bench/scrapecost/watchcost.sh [DURATION] [RUNS] [GOGC]    default: 35s 3 and GOGC unset (100)
#
# GOGC=off runs both twins without a GC of their own but forced ones (then no GC cycle that
# watching brings forward can show). BASE=REV also builds memdoctor at git revision REV and
# watches a fresh pair of twins with each build in every run (a paired A/B). More flags for
# the harness (e.g. -watch-flags "--read-memory=false") go in WATCHCOST_FLAGS.
set -euo pipefail
dur=${1:-35s}
runs=${2:-3}
gogc=${3:-}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOTOOLCHAIN=go1.27.0 go build -o "$tmp/target" ./bench/scrapecost/target
go build -o "$tmp/memdoctor" ./cmd/memdoctor
go build -o "$tmp/watchcost" ./bench/scrapecost/watchcost
builds=(-memdoctor "this=$tmp/memdoctor")
if [ -n "${BASE:-}" ]; then
	mkdir "$tmp/base"
	git archive "$BASE" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/memdoctor-base" ./cmd/memdoctor)
	builds=(-memdoctor "base=$tmp/memdoctor-base" "${builds[@]}")
fi
# shellcheck disable=SC2086
"$tmp/watchcost" -target "$tmp/target" "${builds[@]}" -duration "$dur" -runs "$runs" -gogc "$gogc" ${WATCHCOST_FLAGS:-}
