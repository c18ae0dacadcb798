#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source that the npm package
# node-llama-cpp ships (llama/gitRelease.bundle), for the llama.cpp rows of
# `deno task bench`. Not run in CI: ~15-20 minutes on 2 cores.
#
# Usage: bench/build_llama_server.sh [node-llama-cpp version]
# Scratch: $SVC_LLAMA_BUILD_DIR (default /tmp/svc-llama-build), outside the repo.
# Installs: ~/.cache/svc/llama.cpp/<llama.cpp commit>/llama-server (static,
# one file) and prints its path; bench/llama_server.ts finds it there.
set -euo pipefail
version="${1:-3.22.1}"
scratch="${SVC_LLAMA_BUILD_DIR:-/tmp/svc-llama-build}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/svc/llama.cpp"
mkdir -p "$scratch"
cd "$scratch"
if [ ! -d package ]; then
  npm pack "node-llama-cpp@$version" >/dev/null
  tar xzf "node-llama-cpp-$version.tgz"
fi
[ -d llama.cpp ] || git clone -q package/llama/gitRelease.bundle llama.cpp
commit="$(git -C llama.cpp rev-parse HEAD)"
cmake -S llama.cpp -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >/dev/null
nice -n 10 cmake --build build --target llama-server -j "${SVC_LLAMA_BUILD_JOBS:-2}"
mkdir -p "$cache/$commit"
cp build/bin/llama-server "$cache/$commit/llama-server"
echo "$cache/$commit/llama-server"
