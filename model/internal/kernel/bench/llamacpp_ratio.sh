#!/bin/sh
# Measures LiveHAT's CPU engine side by side with llama.cpp on this machine
# (issue #23): the same random Qwen2.5-0.5B-shaped weights, written by
# `livehat bench model --save` and exported with `livehat export gguf` in bf16
# and q8_0, timed at batch 1 for a 150- and a 1000-token prefill and for
# decode after 150 tokens, on 1 and 2 threads; then the bundled model
# (examples/model) decoding 256 tokens on 1 and 2 threads. Rounds interleave
# the two engines (alternating which runs first), so a shared machine's load
# falls on both; each cell keeps its best sample, and the table prints
# LiveHAT ÷ llama.cpp tokens/s (> 1: LiveHAT faster).
#
# llama.cpp is the npm package node-llama-cpp@3.21.1: its prebuilt CPU
# libraries (one per instruction set; ggml loads the best one for the CPU,
# which this script prints) and llama-bench compiled here from the source
# bundle the package ships, as model/remote/llamaserver/build.sh does for
# llama-server. Needs npm, g++, git and go.
#
# Both engines hold the weights in memory (llama-bench --load-mode none) and
# run without a warm-up pass, one sample per round; LiveHAT's 1000-token
# prefill is `bench model`'s uncached time to first token for a 16-token
# question after a 984-token prefix.
#
# Usage (from the repository root):
#   sh model/internal/kernel/bench/llamacpp_ratio.sh [rounds]
# rounds defaults to 2 (about 15 minutes on a loaded 2-vCPU machine: 8 per round).
# LIVEHAT_LLAMA_DIR: where the package and the llama-bench build are kept and
# reused (default ${XDG_CACHE_HOME:-$HOME/.cache}/livehat/llama-bench-3.21.1;
# a llama-server build folder of build.sh works too).
# LIVEHAT_BENCH_GEN: decode tokens per sample for the 0.5B model (default 32).
set -eu
rounds=${1:-2}
gen=${LIVEHAT_BENCH_GEN:-32}
for n in "$rounds" "$gen"; do
	case $n in
	'' | *[!0-9]* | 0)
		echo "llamacpp_ratio.sh: rounds and LIVEHAT_BENCH_GEN must be positive integers, not '$n'" >&2
		exit 2
		;;
	esac
done
version=3.21.1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
cache=${LIVEHAT_LLAMA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/livehat/llama-bench-$version}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) platform=linux-x64 ;;
*)
	echo "llamacpp_ratio.sh: no prebuilt llama.cpp libraries for $(uname -s)-$(uname -m) in this script" >&2
	exit 1
	;;
esac
bench=$cache/llama-bench
if ! [ -x "$bench" ] || ! [ -f "$cache/.bench-built-$version" ]; then
	for tool in npm g++ git; do
		command -v "$tool" >/dev/null || {
			echo "llamacpp_ratio.sh: $tool not found" >&2
			exit 1
		}
	done
	mkdir -p "$cache/work"
	if ! [ -d "$cache/work/node_modules/node-llama-cpp" ]; then
		# --ignore-scripts: the postinstall would download or build llama.cpp
		# itself; the prebuilt libraries come as optional dependencies.
		(cd "$cache/work" && npm install --no-audit --no-fund --ignore-scripts --no-save "node-llama-cpp@$version" >&2)
	fi
	libs=$cache/work/node_modules/@node-llama-cpp/$platform/bins/$platform
	[ -f "$libs/libllama-common.so" ] || {
		echo "llamacpp_ratio.sh: prebuilt libraries missing at $libs" >&2
		exit 1
	}
	src=$cache/work/src
	if ! [ -d "$src" ]; then
		git clone -q "$cache/work/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$src.tmp" >&2
		mv "$src.tmp" "$src"
	fi
	echo "building llama-bench in $cache (about a minute of g++)" >&2
	g++ -O2 -std=c++17 -fPIC -w -pthread -DNDEBUG -DLLAMA_SHARED -DGGML_SHARED \
		-I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor" -I"$src/tools/llama-bench" \
		-c "$src/tools/llama-bench/llama-bench.cpp" -o "$work/llama-bench.o"
	g++ -O2 -std=c++17 -w -pthread -I"$src/tools/llama-bench" -c "$src/tools/llama-bench/main.cpp" -o "$work/main.o"
	cp -f "$libs"/*.so "$cache/"
	g++ -pthread -o "$bench" "$work/main.o" "$work/llama-bench.o" -L"$cache" -l:libllama-common.so \
		-l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so -Wl,-rpath,'$ORIGIN' -ldl
	touch "$cache/.bench-built-$version"
fi

(cd "$root" && go build -o "$work/livehat" .)
livehat=$work/livehat
"$livehat" bench model --random qwen2.5-0.5b --save "$work/ckpt" --batch 1 --prompt 1 --gen 1 --prefix 0 --repeat 1 >/dev/null
# The random weights carry no tokenizer and llama.cpp needs one to load a
# model; the bundled one serves (the benchmark's token ids are random).
for t in bf16 q8_0; do
	"$livehat" export gguf --checkpoint "$work/ckpt" --tokenizer "$root/examples/model/tokenizer.json" \
		--type "$t" --out "$work/$t.gguf" >/dev/null
done
"$livehat" export gguf --checkpoint "$root/examples/model" --out "$work/bundled.gguf" >/dev/null

# ggml names the CPU library it loads on stderr.
backend=$("$bench" -m "$work/bundled.gguf" -p 0 -n 1 -r 1 -t 1 -o csv 2>&1 >/dev/null |
	sed -n 's/.*loaded CPU backend from .*libggml-cpu-\(.*\)\.so.*/\1/p' | head -n1)
echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'); $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "llama.cpp node-llama-cpp@$version, CPU backend: ${backend:-unknown} (libggml-cpu-${backend:-?}.so)"
echo "LiveHAT: $("$livehat" bench model --checkpoint "$root/examples/model" --batch 1 --prompt 1 --gen 1 --prefix 0 --repeat 1 |
	sed -n 's/.*, \([a-z0-9]*\) kernels.*/\1/p') kernels"

# Each function prints lines "engine model threads test tokens/s".
ours() { # model-folder name dtype threads prompt gen prefix
	"$livehat" bench model --checkpoint "$1" --dtype "$3" --threads "$4" --batch 1 --prompt "$5" --gen "$6" \
		--prefix "$7" --question 16 --repeat 1 |
		awk -v m="$2" -v t="$4" -v p="$5" -v pre="$7" '
		$1 == 1 && $2 == "prefill" { print "livehat", m, t, "pp" p, $4 }
		$1 == 1 && $2 == "decode"  { print "livehat", m, t, "tg", $4 }
		/^time to first token/ { for (i = 1; i <= NF; i++) if ($i == "uncached") { s = $(i+1); sub(/s,?$/, "", s) }
		                         print "livehat", m, t, "pp" (pre + 16), (pre + 16) / s }'
}
theirs() { # gguf name threads llama-bench-test-arguments...
	gguf=$1 name=$2 threads=$3
	shift 3
	"$bench" -m "$gguf" -t "$threads" -r 1 --no-warmup --load-mode none -o csv "$@" 2>/dev/null | tr -d '"' |
		awk -F, -v m="$name" -v t="$threads" 'NR > 1 { p = $(NF-7); g = $(NF-6)
		                                       print "llama.cpp", m, t, (g > 0 ? "tg" : "pp" p), $(NF-1) }'
}
round() { # r
	for t in 1 2; do
		for d in bf16 q8; do
			f=$work/$d.gguf
			[ "$d" = q8 ] && f=$work/q8_0.gguf
			if [ $(($1 % 2)) -eq 1 ]; then
				ours "$work/ckpt" "$d" "$d" "$t" 150 "$gen" 984
				theirs "$f" "$d" "$t" -p 150,1000 -n 0
				theirs "$f" "$d" "$t" -p 0 -n "$gen" -d 150
			else
				theirs "$f" "$d" "$t" -p 150,1000 -n 0
				theirs "$f" "$d" "$t" -p 0 -n "$gen" -d 150
				ours "$work/ckpt" "$d" "$d" "$t" 150 "$gen" 984
			fi
		done
		if [ $(($1 % 2)) -eq 1 ]; then
			ours "$root/examples/model" bundled bf16 "$t" 16 256 0
			theirs "$work/bundled.gguf" bundled "$t" -p 0 -n 256 -d 16
		else
			theirs "$work/bundled.gguf" bundled "$t" -p 0 -n 256 -d 16
			ours "$root/examples/model" bundled bf16 "$t" 16 256 0
		fi
	done
}
for r in $(seq "$rounds"); do
	round "$r" | sed "s/^/round $r: /"
	echo "round $r: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done | tee "$work/log"

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "best of $rounds rounds, batch 1, tokens/s LiveHAT / llama.cpp = ratio (> 1: LiveHAT faster); decode: $gen tokens after 150 (bundled: 256 after 16)"
awk '
/^round/ { key = $4 " " $5 " " $6; if ($7 > best[$3 " " key]) best[$3 " " key] = $7; seen[key] = 1 }
END {
	for (k in seen) {
		# A test only one engine ran (prefill of the bundled model) has no ratio.
		if (!(("livehat " k) in best) || !(("llama.cpp " k) in best)) continue
		split(k, f, " ")
		l = best["livehat " k]; c = best["llama.cpp " k]
		printf "%-8s %s thread%s %-7s %9.1f / %9.1f = %5.2f\n", f[1], f[2], (f[2] == 1 ? " " : "s"), f[3], l, c, l / c
	}
}' "$work/log" | sort
