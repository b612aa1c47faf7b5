#!/bin/sh
# Measures the Go Sgemm against OpenBLAS cblas_sgemm at 1024³ on this machine,
# 1 thread and all physical cores, best of 3 interleaved rounds.
#
# OpenBLAS is installed here, for this measurement only (Debian's
# libopenblas-dev, apt-get); nothing in the module links it.
#
# Usage (from the repository root): sh model/internal/kernel/bench/openblas_ratio.sh [rounds]
set -eu
rounds=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! [ -e /usr/include/x86_64-linux-gnu/cblas.h ] && ! [ -e /usr/include/cblas.h ] && ! ls /usr/include/*/cblas.h >/dev/null 2>&1; then
	apt-get install -y -q libopenblas-dev >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q libopenblas-dev >/dev/null; }
fi
gcc -O2 -o "$work/sgemm_openblas" "$here/sgemm_openblas.c" -lopenblas
(cd "$root" && go test -c -o "$work/kernel.test" ./model/internal/kernel/)

for r in $(seq "$rounds"); do
	# The Go benchmark runs 1 thread and kernel.PhysicalCores() threads;
	# OpenBLAS gets the same thread counts.
	"$work/kernel.test" -test.run='^$' -test.bench='^BenchmarkSgemm$/^n=1024/transB=false' -test.benchtime=20x |
		grep GFLOP | sed "s/^/round $r: /" >"$work/go"
	cat "$work/go"
	for t in $(sed 's/.*threads=\([0-9]*\).*/\1/' "$work/go"); do
		OPENBLAS_NUM_THREADS=$t "$work/sgemm_openblas" 1024 20 | sed "s/^/round $r: /"
	done
done | tee "$work/log"

echo "best of $rounds rounds (wall: GFLOP/s; cpu: GFLOP per CPU-second of all threads):"
awk '
function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i-1); return 0 }
/openblas/ { split($0, f, "threads="); split(f[2], g, " "); t = g[1]
             if (metric("GFLOP/s") > obw[t]) obw[t] = metric("GFLOP/s")
             if (metric("GFLOP/cpu-s") > obc[t]) obc[t] = metric("GFLOP/cpu-s") }
/BenchmarkSgemm/ { split($0, f, "threads="); split(f[2], g, "-"); t = g[1]
             if (metric("GFLOP/s") > gow[t]) gow[t] = metric("GFLOP/s")
             if (metric("GFLOP/cpu-s") > goc[t]) goc[t] = metric("GFLOP/cpu-s") }
END { for (t in obw) printf "threads=%s  wall: openblas %.1f go %.1f ratio %.0f%%   cpu: openblas %.1f go %.1f ratio %.0f%%\n",
        t, obw[t], gow[t], 100 * gow[t] / obw[t], obc[t], goc[t], 100 * goc[t] / obc[t] }
' "$work/log" | sort
