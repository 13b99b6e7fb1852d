#!/usr/bin/env bash
# run.sh: leaktest's proof on a busy two-core machine (docs/leaktest.md, RESULTS.md).
#   1. every healthy test, 20 runs each, with bench/busy's loops beside them: no false failure;
#   2. every leak test, 20 runs each: each found, and the test time to its verdict;
#   3. the shapes of issue 30 (a goroutine that spins, heavy work left behind, a count read
#      while goroutines still run, a goroutine waiting in a helper), 20 runs each, beside
#      bench/busy's loops: each found within TimeLimit (10 s) and a few seconds of wall time;
#   4. the real libraries' cases (bench/leaktest), 20 runs each of the leaking and fixed releases;
#   5. the benchmarks: the cost per call of a cheap function and the time to a verdict;
#   6. the goroutine-leak kernels (bench/leaktest/testdata/kernels, Go 1.27), KRUNS runs each
#      (default 3), each in a process of its own: found or not, the leaked goroutine's own
#      function named or not, beside how many goroutines Go's goroutineleak profile proves.
# The wall column is the test's own time (go test's), Loop's whole: the failure written too.
# Usage: bench/leaktest/run.sh [RUNS] (default 20). Writes its logs under $OUT (default a
# temporary directory) and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-20}
kruns=${KRUNS:-3}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "logs in $out; $(nproc) cores; load: $(uptime | sed 's/.*load average: //')"

summary() { # LOG: per test, passes and failures, and the verdict times
	awk '
		/^=== RUN/ { name=$3 }
		/leaktest: (no leak|not judged)/ || /measured over/ {
			if (match($0, /\([0-9.]+m?s\)/)) {
				v = substr($0, RSTART+1, RLENGTH-2); t = v + 0
				if (v ~ /ms$/) t = t / 1000
				n[name]++; sum[name]+=t; if (t > max[name]) max[name]=t
			}
		}
		/^--- (PASS|FAIL)/ { w = $4; gsub(/[()s]/, "", w); w += 0; if (w > wmax[$3]) wmax[$3] = w }
		/^--- PASS/ { pass[$3]++ }
		/^--- FAIL/ { fail[$3]++ }
		END { for (k in pass) seen[k]=1; for (k in fail) seen[k]=1
		      for (k in seen) printf "  %-38s %3d passed %3d failed   verdict mean %5.2fs max %5.2fs   wall max %5.2fs\n", k, pass[k], fail[k], (n[k] ? sum[k]/n[k] : 0), max[k], wmax[k] }' "$1" | sort
}

echo "== 1. healthy patterns, $runs runs each, beside bench/busy's loops"
bench/busy -- go test -timeout 60m -count="$runs" -run 'Healthy' -v ./leaktest/ > "$out/healthy.log" 2>&1 || true
summary "$out/healthy.log"

echo "== 2. leaks, $runs runs each (each must fail: 'passed' here counts the leak found)"
go test -timeout 60m -count="$runs" -run '^(TestHeapLeakFails|TestHeapLeakNamesTheLine|TestGoroutineLeakFails)$' -v ./leaktest/ > "$out/leaks.log" 2>&1 || true
summary "$out/leaks.log"

echo "== 3. the shapes of issue 30, $runs runs each, beside bench/busy's loops (each must fail: 'passed' counts the leak found)"
bench/busy -- go test -timeout 60m -count="$runs" -run '^(TestSpinningGoroutineLeakFails|TestHeavyWorkLeftBehindLeakFails|TestNoisyCountLeakFails|TestOwnFunctionNamed)$' -v ./leaktest/ > "$out/shapes.log" 2>&1 || true
summary "$out/shapes.log"

echo "== 4. real libraries, $runs runs each: the leaking releases must fail, the fixed ones pass"
go test -timeout 60m -count="$runs" -run 'Releases' -v ./bench/leaktest/ > "$out/libraries.log" 2>&1 || true
grep -E '^    --- (PASS|FAIL)' "$out/libraries.log" | awk '{print $2, $3}' | sort | uniq -c
grep -oE '[^ ]+@v[0-9.]+ \(verdict after [0-9.]+m?s\)' "$out/libraries.log" | sed -E 's/ \(verdict after ([0-9.]+)(m?s)\)/ \1 \2/' |
	awk '{ t = $2 * ($3 == "ms" ? 0.001 : 1); n[$1]++; s[$1]+=t; if (t > m[$1]) m[$1]=t } END { for (k in n) printf "  %-45s verdict mean %5.2fs max %5.2fs over %d runs\n", k, s[k]/n[k], m[k], n[k] }' | sort

echo "== 5. benchmarks (5 Loops each)"
go test -timeout 60m -run '^$' -bench . -benchtime 5x ./leaktest/ | tee "$out/bench.txt" | grep Benchmark

echo "== 6. goroutine-leak kernels on Go 1.27, $kruns runs each, beside the goroutineleak profile"
KERNELS_RUNS="$kruns" go test -timeout 60m -count=1 -run '^TestGoroutineLeakKernels$' -v ./bench/leaktest/ > "$out/kernels.log" 2>&1 || true
sed -n '/ kernels, /,/the longest Loop/p' "$out/kernels.log" | sed 's/^ *//'
grep -E '^--- (PASS|FAIL|SKIP)' "$out/kernels.log" || true
