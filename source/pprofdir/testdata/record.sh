#!/usr/bin/env bash
# Records the folders of profiles the tests of package pprofdir read, from a real running
# program (leaky/main.go) the way people record them: curl /debug/pprof/... every few seconds
# into files named anyhow, and the program's GODEBUG=gctrace=1 lines kept as
# `docker logs --timestamps` would (an RFC 3339 time before each line).
#
#   source/pprofdir/testdata/record.sh [SERIES...]   (default: all; about 8 minutes)
#
# Series: heapleak (13 heap profiles 5 s apart, a cache growing about 8 -> 197 MiB),
# goroutines (13 goroutine profiles 5 s apart, 20 goroutines a second blocking for ever, and a
# debug=1 and a gzipped debug=2 dump at the end), healthy (13 heap profiles 5 s apart, garbage only),
# slow90s (5 heap profiles 90 s apart, a 1 MiB/min leak, with its timestamped gctrace log and a
# goroutine profile: an input too short to prove a slow leak), leakprofile (the goroutine
# pile-up built with Go 1.27: its goroutineleak profile, which proves the leak, and a goroutine
# profile, 10 s in; the toolchain is fetched with GOTOOLCHAIN=go1.27.0).
set -euo pipefail
cd "$(dirname "$0")"
BIN=$(mktemp -d)
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$BIN"' EXIT
go build -o "$BIN/leaky" ./leaky

# start ARGS...: runs leaky ($LEAKY, default the go build above), sets URL and PID; stderr (gctrace) goes to $BIN/gctrace.log
# with a time before each line.
start() {
	mkfifo "$BIN/out"
	GODEBUG=gctrace=1 "${LEAKY:-$BIN/leaky}" "$@" > "$BIN/out" 2> >(while IFS= read -r l; do
		printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" "$l"; done > "$BIN/gctrace.log") &
	PID=$!
	URL=$(head -1 "$BIN/out" | grep -o 'http://[^ ]*')
	cat "$BIN/out" > /dev/null &
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""; rm -f "$BIN/out"; }

# series DIR INTERVAL COUNT PROFILE NAME_FORMAT: COUNT profiles, INTERVAL seconds apart.
series() {
	local dir=$1 every=$2 n=$3 prof=$4 fmt=$5
	rm -rf "$dir" && mkdir -p "$dir"
	for i in $(seq 1 "$n"); do
		sleep "$every"
		curl -fsS "${URL}${prof}" -o "$dir/$(printf "$fmt" "$i")"
	done
}

for s in ${@:-heapleak goroutines healthy slow90s leakprofile}; do
	echo "== $s"
	case $s in
	heapleak)
		start -mode heap -leak 3300000
		series heapleak 5 13 heap 'heap_%d.pb.gz'
		stop ;;
	goroutines)
		start -mode goroutine -leak 20
		series goroutines 5 13 goroutine 'g-%03d.prof'
		curl -fsS "${URL}goroutine?debug=1" -o goroutine-debug1.txt
		curl -fsS "${URL}goroutine?debug=2" | gzip -9 > goroutine-debug2.txt.gz
		stop ;;
	healthy)
		start -mode healthy
		series healthy 5 13 heap 'snap.%02d'
		stop ;;
	slow90s)
		start -mode heap -leak 17500 -churn 100
		series slow90s 90 5 heap 'heap-%d.pb.gz'
		curl -fsS "${URL}goroutine" -o slow90s/goroutines.pb.gz
		stop
		cp "$BIN/gctrace.log" slow90s/app.log ;;
	leakprofile)
		GOTOOLCHAIN=go1.27.0 go build -o "$BIN/leaky127" ./leaky
		LEAKY="$BIN/leaky127" start -mode goroutine -leak 20
		rm -rf leakprofile && mkdir leakprofile
		sleep 10
		curl -fsS "${URL}goroutineleak" -o leakprofile/leaked.pb.gz
		curl -fsS "${URL}goroutine" -o leakprofile/all.pb.gz
		stop ;;
	esac
	du -sh "$s" 2>/dev/null || true
done
