#!/bin/sh
# Measures the Go Sgemm against OpenBLAS cblas_sgemm at 1024³ on this machine,
# 1 thread and all physical cores, best of interleaved rounds, and compares
# each kernel set of ours with OpenBLAS's best kernels for the CPU:
#
#   - OpenBLAS as it runs by itself: it names the core it picked (a DYNAMIC_ARCH
#     build that does not know a newer CPU falls back to old kernels: Debian's
#     0.3.21 picks its SSE3 "Prescott" ones on some AVX-512 Xeons);
#   - OpenBLAS forced to its best core for the CPU (OPENBLAS_CORETYPE): SkylakeX
#     (AVX-512) where /proc/cpuinfo lists avx512f, Haswell (AVX2) where it lists
#     avx2, compared with our avx512 and avx2 kernel sets (LIVEHAT_KERNELS).
#
# The ratio that counts is ours over OpenBLAS's best, per thread count (target
# ≥ 80 %). OpenBLAS is installed here, for this measurement only (Debian's
# libopenblas-dev, apt-get); nothing in the module links it.
#
# Usage (from the repository root): sh model/internal/kernel/bench/openblas_ratio.sh [rounds]
set -eu
rounds=${1:-3}
case $rounds in
'' | *[!0-9]* | 0)
	echo "openblas_ratio.sh: rounds must be a positive integer, not '$rounds'" >&2
	exit 2
	;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! [ -e /usr/include/x86_64-linux-gnu/cblas.h ] && ! [ -e /usr/include/cblas.h ] && ! ls /usr/include/*/cblas.h >/dev/null 2>&1; then
	apt-get install -y -q libopenblas-dev >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q libopenblas-dev >/dev/null; }
fi
gcc -O2 -o "$work/sgemm_openblas" "$here/sgemm_openblas.c" -lopenblas
(cd "$root" && go test -c -o "$work/kernel.test" ./model/internal/kernel/)

# Pairs of (our kernel set, OpenBLAS core) that use the same instructions.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
pairs=""
case " $flags " in *" avx512f "*) pairs="avx512:SkylakeX" ;; esac
case " $flags " in *" avx2 "*) pairs="$pairs avx2:Haswell" ;; esac
echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "OpenBLAS by itself: $(OPENBLAS_NUM_THREADS=1 "$work/sgemm_openblas" 64 1 | sed 's/.*(\(.*\))/\1/')"

for r in $(seq "$rounds"); do
	# The Go benchmark runs 1 thread and kernel.PhysicalCores() threads;
	# OpenBLAS gets the same thread counts.
	threads=""
	for pair in $pairs; do
		set=${pair%%:*}
		LIVEHAT_KERNELS=$set "$work/kernel.test" -test.run='^$' -test.bench='^BenchmarkSgemm$/^n=1024/transB=false' -test.benchtime=20x |
			grep GFLOP | sed "s/^/round $r: go kernels=$set /" >"$work/go"
		cat "$work/go"
		threads=$(sed 's/.*threads=\([0-9]*\).*/\1/' "$work/go")
	done
	for t in $threads; do
		OPENBLAS_NUM_THREADS=$t "$work/sgemm_openblas" 1024 20 | sed "s/^/round $r: /"
		for pair in $pairs; do
			OPENBLAS_CORETYPE=${pair#*:} OPENBLAS_NUM_THREADS=$t "$work/sgemm_openblas" 1024 20 | sed "s/^/round $r: /"
		done
	done
done | tee "$work/log"

echo "best of $rounds rounds (wall: GFLOP/s; cpu: GFLOP per CPU-second of all threads):"
awk -v pairs="$pairs" '
function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i-1); return 0 }
function keep(key) { if (metric("GFLOP/s") > wall[key]) wall[key] = metric("GFLOP/s")
                     if (metric("GFLOP/cpu-s") > cpu[key]) cpu[key] = metric("GFLOP/cpu-s") }
/openblas/ { split($0, f, "threads="); split(f[2], g, " "); t = g[1]
             split($0, f, "core="); split(f[2], g, " "); core = g[1]
             seen[t] = 1; keep("openblas " core " " t) }
/BenchmarkSgemm/ { split($0, f, "kernels="); split(f[2], g, " "); set = g[1]
                   split($0, f, "threads="); split(f[2], g, "-"); t = g[1]
                   keep("go " set " " t) }
END {
	n = split(pairs, pp, " ")
	for (t in seen) {
		for (i = 1; i <= n; i++) {
			split(pp[i], q, ":"); set = q[1]; core = q[2]
			o = "openblas " core " " t; gk = "go " set " " t
			if (!(o in wall) || !(gk in wall)) continue
			printf "threads=%s  ours %-6s %6.1f wall %6.1f cpu   openblas %-8s %6.1f wall %6.1f cpu   ratio wall %3.0f%%  cpu %3.0f%%\n",
				t, set, wall[gk], cpu[gk], core, wall[o], cpu[o], 100 * wall[gk] / wall[o], 100 * cpu[gk] / cpu[o]
		}
	}
}
' "$work/log" | sort
# Every OpenBLAS core that ran, the one it picks by itself included.
awk '
/openblas/ { split($0, f, "threads="); split(f[2], g, " "); t = g[1]
             split($0, f, "core="); split(f[2], g, " "); key = g[1] " threads=" t
             for (i = 2; i <= NF; i++) {
                     if ($i == "GFLOP/s" && $(i-1) > wall[key]) wall[key] = $(i-1)
                     if ($i == "GFLOP/cpu-s" && $(i-1) > cpu[key]) cpu[key] = $(i-1)
             } }
END { for (k in wall) printf "openblas %s: %.1f wall %.1f cpu\n", k, wall[k], cpu[k] }
' "$work/log" | sort
