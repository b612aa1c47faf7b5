#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source bundle that the npm package
# node-llama-cpp ships, against the prebuilt libraries of the same package
# (libllama, libggml*, libllama-common), so CI needs only npm and g++: no
# cmake, no GPU toolkit. tools/mtmd, cpp-httplib and an empty UI table are
# compiled here because the package does not ship them as libraries.
#
# Usage: build.sh [OUT]   (OUT defaults to $LIVEHAT_LLAMA_DIR or
# ${XDG_CACHE_HOME:-$HOME/.cache}/livehat/llama-server-<version>)
# Prints the path of the binary on its last line; the libraries it needs lie
# next to it (the binary's rpath is $ORIGIN). A finished build is reused.
set -euo pipefail

version=3.21.1
out=${1:-${LIVEHAT_LLAMA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/livehat/llama-server-$version}}
jobs=${LIVEHAT_BUILD_JOBS:-$(nproc)}

if [[ -x $out/llama-server && -f $out/.built-$version ]]; then
	echo "$out/llama-server"
	exit 0
fi
for tool in npm g++ git; do
	command -v "$tool" >/dev/null || { echo "build.sh: $tool not found" >&2; exit 1; }
done
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) platform=linux-x64 ;;
*) echo "build.sh: no prebuilt llama.cpp libraries for $(uname -s)-$(uname -m) in this script" >&2; exit 1 ;;
esac

mkdir -p "$out"
work=$out/work
mkdir -p "$work"
if [[ ! -d $work/node_modules/node-llama-cpp ]]; then
	# --ignore-scripts: the package's postinstall would download or build
	# llama.cpp itself; the prebuilt libraries come as optional dependencies.
	(cd "$work" && npm install --no-audit --no-fund --ignore-scripts --no-save "node-llama-cpp@$version" >&2)
fi
pkg=$work/node_modules/node-llama-cpp
libs=$work/node_modules/@node-llama-cpp/$platform/bins/$platform
[[ -f $libs/libllama-common.so ]] || { echo "build.sh: prebuilt libraries missing at $libs" >&2; exit 1; }
src=$work/src
if [[ ! -d $src ]]; then
	git clone -q "$pkg/llama/gitRelease.bundle" "$src.tmp" >&2
	mv "$src.tmp" "$src"
fi

obj=$work/obj
mkdir -p "$obj"
cxxflags=(-O2 -std=c++17 -fPIC -w -pthread -DNDEBUG -DLLAMA_SHARED -DGGML_SHARED
	-I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor"
	-I"$src/tools/mtmd" -I"$src/tools/server" -I"$src" -I"$obj")

# The UI table: embed.cpp without an asset folder writes an empty one.
g++ -O2 -std=c++17 -o "$obj/llama-ui-embed" "$src/tools/ui/embed.cpp"
"$obj/llama-ui-embed" "$obj/ui.cpp" "$obj/ui.h" >&2

sources=("$obj/ui.cpp" "$src/vendor/cpp-httplib/httplib.cpp")
# mtmd's sources are those its CMakeLists.txt lists.
while read -r f; do
	sources+=("$src/tools/mtmd/$f")
done < <(sed -n '/^add_library(mtmd/,/)/p' "$src/tools/mtmd/CMakeLists.txt" | grep -o '[A-Za-z0-9_./-]*\.cpp')
# vendor/hash as its CMakeLists.txt builds it: sha1.c as C++ (it lives in
# a namespace), the other two as C.
sources+=("$src/vendor/hash/hash.cpp" "$src/vendor/hash/sha1/sha1.c" "$src/vendor/hash/sha256/sha256.c" "$src/vendor/hash/xxhash/xxhash.c")
for f in server-chat server-task server-queue server-common server-context server-stream server-tools server-mcp \
	server-schema server server-http server-models main; do
	sources+=("$src/tools/server/$f.cpp")
done

objects=()
pids=()
for f in "${sources[@]}"; do
	o=$obj/$(echo "${f#"$src"/}" | tr '/' '_').o
	objects+=("$o")
	[[ -f $o ]] && continue
	defs=(-DCPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH=1048576 -DCPPHTTPLIB_LISTEN_BACKLOG=512
		-DCPPHTTPLIB_REQUEST_URI_MAX_LENGTH=32768 -DCPPHTTPLIB_TCP_NODELAY=1)
	compile=(g++ "${cxxflags[@]}" -x c++)
	case $f in
	*/tools/mtmd/*) defs+=(-DLLAMA_BUILD) ;;
	*/sha256.c | */xxhash.c) compile=(gcc -O2 -fPIC -w -DNDEBUG -x c) ;;
	esac
	"${compile[@]}" -I"$src/vendor/hash" "${defs[@]}" -c "$f" -o "$o.tmp" && mv "$o.tmp" "$o" &
	pids+=($!)
	if (( ${#pids[@]} >= jobs )); then
		wait "${pids[0]}"
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do wait "$p"; done

cp -f "$libs"/*.so "$out/"
g++ -pthread -o "$out/llama-server" "${objects[@]}" -L"$out" -l:libllama-common.so -l:libllama.v0.4.0.so \
	-l:libggml.v0.4.0.so -l:libggml-base.so -Wl,-rpath,'$ORIGIN' -ldl
touch "$out/.built-$version"
echo "$out/llama-server"
