# shellcheck shell=bash
# measure.sh: times a whole command with public tools, for the bench scripts to source.
#
#   . bench/measure.sh
#   measure RUNS COMMAND [ARGS...]
#
# Runs COMMAND once to warm the caches, then RUNS times, its output discarded, and prints the
# median and the range (min-max) of the wall time, the CPU time (user + system) and the peak
# RSS. It times with GNU time (/usr/bin/time, Debian's `time` package), which also reads the
# peak RSS; without it, with hyperfine (Debian's `hyperfine`: wall and CPU time only). A run
# that fails stops the measurement with its status.

# measure RUNS COMMAND [ARGS...]
measure() {
	local runs=$1
	shift
	if [ -x /usr/bin/time ] && /usr/bin/time -f %e true >/dev/null 2>&1; then
		measure_gnutime "$runs" "$@"
	elif command -v hyperfine >/dev/null 2>&1; then
		measure_hyperfine "$runs" "$@"
	else
		echo "measure: neither GNU time nor hyperfine is installed: apt-get install time (or hyperfine)" >&2
		return 1
	fi
}

# stats prints "median UNIT (min-max)" of the numbers on stdin, with the printf format $1.
stats() {
	sort -g | awk -v f="$1" -v unit="$2" '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "n/a"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf f " %s (" f "-" f ")\n", m, unit, v[1], v[NR]
		}'
}

measure_gnutime() {
	local runs=$1
	shift
	local log
	log=$(mktemp)
	"$@" >/dev/null 2>&1 || { echo "measure: the warm-up run of $* failed" >&2; rm -f "$log"; return 1; }
	local i
	for ((i = 0; i < runs; i++)); do
		# wall seconds, user+system seconds, peak RSS in KiB
		if ! /usr/bin/time -a -o "$log" -f '%e %U %S %M' "$@" >/dev/null 2>&1; then
			echo "measure: run $((i + 1)) of $* failed" >&2
			rm -f "$log"
			return 1
		fi
	done
	echo "   $runs runs after a warm-up (GNU time), median (min-max); RSS is the peak:"
	echo "   wall    $(awk '{ print $1 }' "$log" | stats '%.2f' s)"
	echo "   CPU     $(awk '{ print $2 + $3 }' "$log" | stats '%.2f' s)"
	echo "   RSS     $(awk '{ print $4 / 1024 }' "$log" | stats '%.1f' MiB)"
	rm -f "$log"
}

measure_hyperfine() {
	local runs=$1
	shift
	local json
	json=$(mktemp)
	# hyperfine runs a shell command line: quote each argument for the shell.
	if ! hyperfine --warmup 1 --runs "$runs" --style none --export-json "$json" -- "$(printf '%q ' "$@")" >/dev/null; then
		echo "measure: hyperfine $* failed" >&2
		rm -f "$json"
		return 1
	fi
	# The "times" array of its JSON holds one wall time per run, one a line.
	echo "   $runs runs after a warm-up (hyperfine), median (min-max):"
	echo "   wall    $(awk '/"times"/ { on = 1; next } on && /\]/ { on = 0 } on { gsub(/[ ,]/, ""); print }' "$json" | stats '%.2f' s)"
	echo "   CPU     $(awk -F': ' '/"user"|"system"/ { gsub(/,/, "", $2); s += $2 } END { printf "%.2f", s }' "$json") s (mean; hyperfine reads no peak RSS)"
	rm -f "$json"
}
