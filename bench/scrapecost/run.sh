#!/usr/bin/env bash
# run.sh measures what memdoctor's requests cost a Go 1.27 target, at a few sizes: CPU time
# per request in the target (from /proc), what it allocates per request and the longest
# stop-the-world pause the requests caused (its own runtime/metrics), and wall time. Needs
# GOTOOLCHAIN=go1.27.0 to work.
#
#   bench/scrapecost/run.sh [REQUESTS]    default 500
set -euo pipefail
n=${1:-500}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOTOOLCHAIN=go1.27.0 go build -o "$tmp/target" ./bench/scrapecost/target
go build -o "$tmp/scrapecost" ./bench/scrapecost
for size in "-goroutines 100 -leaked 10 -heap-mib 16" "-goroutines 10000 -leaked 1000 -heap-mib 256"; do
	# shellcheck disable=SC2086
	"$tmp/scrapecost" -target "$tmp/target" -n "$n" -- $size
	echo
done
