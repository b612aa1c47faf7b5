#!/usr/bin/env bash
# devicecheck.sh proves the CUDA backend on a machine with an NVIDIA GPU:
# the driver binding, NVRTC, every kernel against the CPU emulator, the
# Runner and Backend against the CPU backend (parity), the engine serving
# through the Runner as LIVEHAT_BACKEND=cuda selects it, and tokens/s of a
# Qwen2.5-0.5B-shaped model. About two minutes on an H200; well under five.
#
#   model/cuda/devicecheck.sh          build the test binaries and run them (needs Go)
#   model/cuda/devicecheck.sh build    only build them into model/cuda/devicecheck-bin/
#   model/cuda/devicecheck.sh run      only run prebuilt binaries (a GPU machine without Go)
#
# The binaries (model/cuda/devicecheck-bin/, not committed) are static (CGO_ENABLED=0: purego loads libcuda without
# cgo), so they run on any Linux x86-64 GPU host. NVRTC (libnvrtc.so.12 or
# .13) must be present there unless generated PTX is embedded; the script
# looks for it in the usual places, including pip's nvidia-cuda-nvrtc wheels.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$here/devicecheck-bin"

build() {
	mkdir -p "$bin"
	(cd "$root" &&
		CGO_ENABLED=0 go test -c -o "$bin/cuda.test" ./model/cuda &&
		CGO_ENABLED=0 go test -c -o "$bin/engine.test" ./model/engine &&
		CGO_ENABLED=0 go test -c -o "$bin/driver.test" ./model/cuda/internal/driver &&
		CGO_ENABLED=0 go test -c -o "$bin/nvrtc.test" ./model/cuda/internal/nvrtc) || exit 1
	echo "built test binaries in $bin"
}

find_nvrtc() {
	if [ -n "${LIVEHAT_NVRTC:-}" ]; then return; fi
	if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
		echo "NVRTC: $(ldconfig -p | grep -m1 'libnvrtc\.so' | awk '{print $NF}')"
		return
	fi
	local dirs="/usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/*/lib /opt/conda/lib /usr/lib/x86_64-linux-gnu"
	if command -v python3 >/dev/null; then
		dirs="$dirs $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)"
	fi
	local lib
	# shellcheck disable=SC2086
	lib=$(find $dirs -maxdepth 5 -name 'libnvrtc.so.1[0-9]*' ! -name '*builtins*' 2>/dev/null | sort -r | head -1)
	if [ -n "$lib" ]; then
		export LIVEHAT_NVRTC="$lib"
		export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		echo "NVRTC: $lib"
	else
		echo "NVRTC: not found; the kernels load only from embedded generated PTX"
	fi
}

run() {
	local status=0
	echo "== device"
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>/dev/null || echo "nvidia-smi unavailable"
	find_nvrtc
	LIVEHAT_PTX_CACHE=$(mktemp -d)
	export LIVEHAT_PTX_CACHE
	# On a GPU machine a test that cannot open the device fails instead of
	# skipping, so a missing library cannot pass for a proof.
	export LIVEHAT_REQUIRE_GPU=1
	cd "$here/internal/driver" || exit 1
	echo "== driver binding"
	timeout 60 "$bin/driver.test" -test.run 'OnDevice' -test.v 2>&1 | grep -vE '^=== RUN' || status=1
	echo "== NVRTC"
	cd "$here/internal/nvrtc" && timeout 60 "$bin/nvrtc.test" -test.run 'OnDevice' -test.v 2>&1 | grep -vE '^=== RUN' || status=1
	echo "== kernels, parity with the emulator and the CPU backend"
	cd "$here" && timeout 150 "$bin/cuda.test" -test.run 'GPU' -test.v -test.timeout 150s 2>&1 | grep -vE '^=== RUN' || status=1
	echo "== engine on the Runner (LIVEHAT_BACKEND=cuda)"
	cd "$root/model/engine" && LIVEHAT_BACKEND=cuda timeout 120 "$bin/engine.test" -test.run 'GPU|LoadBackendSelection' -test.v -test.timeout 120s 2>&1 | grep -vE '^=== RUN' || status=1
	echo "== throughput (Qwen2.5-0.5B shape, random bf16 weights)"
	cd "$here" && timeout 150 "$bin/cuda.test" -test.run '^$' -test.bench 'GPU' -test.benchtime 30x -test.timeout 150s 2>&1 || status=1
	echo "== done (status $status)"
	return $status
}

case "${1:-all}" in
build) build ;;
run) run ;;
all) build && run ;;
*)
	echo "usage: $0 [build|run|all]" >&2
	exit 2
	;;
esac
