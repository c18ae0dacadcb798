#!/bin/bash
# Runs on the lent GPU machine (see pack.sh): unpacks Deno, node_modules and the Vulkan loader,
# then each part named, in order, writing under $OUT:
#   conformance  every decoder family x dtype on webgpu against transformers.js (CONF_S s)
#   bench        deno task bench --device webgpu --quick --only $PARTS (BENCH_S s)
#   turns        conversation_profile.ts: $TURNS turns and users (default 8), every model call
#                timed (TURNS_S s)
#                (prefix-cache hits put together on the GPU from blocks kept there)
#   turns-ort    the same, hits uploaded from memory by onnxruntime-web (UPLOAD=ort)
#   turns-write  the same, hits written from memory with queue.writeBuffer (UPLOAD=write)
#   profile      per-step cost of the chat benchmark model, raw sessions (step_profile.ts)
#   dispatch     Deno's WebGPU cost per compute dispatch and per read-back (dispatch_cost.ts)
set -u
start=$(date +%s)
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -e $icd ] && export VK_DRIVER_FILES=$icd
mkdir -p /tmp/bin && xz -T0 -dc .gpu/deno.xz > /tmp/bin/deno && chmod +x /tmp/bin/deno
export PATH=/tmp/bin:$PATH XDG_RUNTIME_DIR=/tmp DENO_DIR=/tmp/denodir
tar -xJf .gpu/nm.tar.xz
nvidia-smi -L
lscpu | grep 'Model name'
run="deno run --cached-only -A"
for part in "$@"; do
  echo "== $part at $(($(date +%s) - start)) s"
  case $part in
    conformance)
      cases=$($run bench/webgpu/conformance_cases.ts /tmp/cases)
      timeout "${CONF_S:-150}" $run tests/engine/conformance/_decoder_oracle_probe.ts webgpu "$cases" \
        > "$OUT/conformance.jsonl" 2> "$OUT/conformance.err"
      $run bench/webgpu/conformance_cases.ts --summary "$OUT/conformance.jsonl"
      ;;
    bench)
      timeout "${BENCH_S:-230}" $run bench/run.ts --device webgpu --quick --only "${PARTS:-chat,conversation}" \
        --out "$OUT/bench.md" > "$OUT/bench.log" 2>&1
      tail -c 3000 "$OUT/bench.log"
      ;;
    turns | turns-ort | turns-write)
      upload=${part#turns}
      upload=${upload#-}
      UPLOAD=$upload timeout "${TURNS_S:-200}" $run bench/webgpu/conversation_profile.ts \
        demo/chat-bench "" "${TURNS:-8}"
      ;;
    profile) timeout "${PROFILE_S:-170}" $run bench/webgpu/step_profile.ts ;;
    dispatch) timeout 60 $run bench/webgpu/dispatch_cost.ts ;;
    *) echo "unknown part: $part" ;;
  esac
done
