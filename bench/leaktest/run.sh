#!/usr/bin/env bash
# run.sh: leaktest's proof on a busy two-core machine (docs/leaktest.md, RESULTS.md).
#   1. every healthy test, 20 runs each, with bench/busy's loops beside them: no false failure;
#   2. every leak test, 20 runs each: each found, and the test time to its verdict;
#   3. the real libraries' cases (bench/leaktest), 20 runs each of the leaking and fixed releases;
#   4. the benchmarks: the cost per call of a cheap function and the time to a verdict.
# Usage: bench/leaktest/run.sh [RUNS] (default 20). Writes its logs under $OUT (default a
# temporary directory) and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-20}
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
		/^--- PASS/ { pass[$3]++ }
		/^--- FAIL/ { fail[$3]++ }
		END { for (k in pass) seen[k]=1; for (k in fail) seen[k]=1
		      for (k in seen) printf "  %-45s %3d passed %3d failed   verdict mean %5.2fs max %5.2fs\n", k, pass[k], fail[k], (n[k] ? sum[k]/n[k] : 0), max[k] }' "$1" | sort
}

echo "== 1. healthy patterns, $runs runs each, beside bench/busy's loops"
bench/busy -- go test -timeout 60m -count="$runs" -run 'Healthy' -v ./leaktest/ > "$out/healthy.log" 2>&1 || true
summary "$out/healthy.log"

echo "== 2. leaks, $runs runs each (each must fail: 'passed' here counts the leak found)"
go test -timeout 60m -count="$runs" -run '^(TestHeapLeakFails|TestHeapLeakNamesTheLine|TestGoroutineLeakFails)$' -v ./leaktest/ > "$out/leaks.log" 2>&1 || true
summary "$out/leaks.log"

echo "== 3. real libraries, $runs runs each: the leaking releases must fail, the fixed ones pass"
go test -timeout 60m -count="$runs" -v ./bench/leaktest/ > "$out/libraries.log" 2>&1 || true
grep -E '^    --- (PASS|FAIL)' "$out/libraries.log" | awk '{print $2, $3}' | sort | uniq -c
grep -oE '[^ ]+@v[0-9.]+ \(verdict after [0-9.]+m?s\)' "$out/libraries.log" | sed -E 's/ \(verdict after ([0-9.]+)(m?s)\)/ \1 \2/' |
	awk '{ t = $2 * ($3 == "ms" ? 0.001 : 1); n[$1]++; s[$1]+=t; if (t > m[$1]) m[$1]=t } END { for (k in n) printf "  %-45s verdict mean %5.2fs max %5.2fs over %d runs\n", k, s[k]/n[k], m[k], n[k] }' | sort

echo "== 4. benchmarks (5 Loops each)"
go test -timeout 60m -run '^$' -bench . -benchtime 5x ./leaktest/ | tee "$out/bench.txt" | grep Benchmark
