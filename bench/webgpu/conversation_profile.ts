/**
 * Where a conversation turn's time to first token goes on WebGPU: the chat engine in this
 * process (no HTTP) on the benchmark model, the conversation and shared-system-prompt workloads of
 * bench/conversation.ts, with every model call the engine makes timed (prefill runs with their
 * new and cached tokens, decode loops to their end, which includes reading the cache back).
 *
 * Usage: deno run -A bench/webgpu/conversation_profile.ts [model id] [system words] [turns]
 * (defaults: demo/chat-bench, the conversation bench's system prompt, 4 turns and 4 users).
 * The three ways of getting a cached prefix onto the GPU, one per run, compared by their hits'
 * prefill runs:
 * - by default, a hit is put together on the GPU from the prefix cache's blocks kept there
 *   (gpu_cache_copies.ts), as the engine does;
 * - `UPLOAD=ort`: fed from memory, uploaded by onnxruntime-web (its staging buffers);
 * - `UPLOAD=write`: every `past` input held in memory fed as a GPU buffer this script filled with
 *   `queue.writeBuffer` (a cache the session still holds on the GPU, as after a prefill, too).
 *
 * @module
 */

import { loadRuntime } from "../../src/engine/runtime.ts";
import type { ModelSession, PlainTensor } from "../../src/engine/onnx_session.ts";
import type { ChatMessage } from "../../src/core/inference_types.ts";

// The runtime first: transformers.js binds to the ONNX Runtime present when it is first imported.
const device = (Deno.env.get("DEVICE") ?? "webgpu") as "webgpu" | "cpu" | "wasm";
await loadRuntime(device);
const { loadModel } = await import("../../src/engine/load_model.ts");
const { ChatEngine } = await import("../../src/engine/chat/chat_engine.ts");
const { DEFAULT_PREFIX_CACHE_BYTES } = await import("../../src/engine/chat/prefix_cache.ts");
const { materializeDemoModel } = await import("../../src/engine/generated_models/demo_models.ts");
const { makeTexts } = await import("../_texts.ts");
const { ANSWER_TOKENS, SYSTEM_WORDS } = await import("../conversation.ts");

const id = Deno.args[0] ?? "demo/chat-bench";
const systemWords = Number(Deno.args[1] || SYSTEM_WORDS);
const turns = Number(Deno.args[2] ?? 4);
const ms = (x: number) => Math.round(x);

const cacheDir = await Deno.makeTempDir({ prefix: "svc-conversation-profile-" });
const folder = await materializeDemoModel(id, cacheDir);
const model = await loadModel(folder, "chat", { device, dtype: "fp32" });

// deno-lint-ignore no-explicit-any
const ort = (globalThis as any)[Symbol.for("onnxruntime")];
const upload = Deno.env.get("UPLOAD") ?? "";
const writeUploads = upload === "write";

/**
 * With `UPLOAD=write`: `feeds` with each non-empty `past` input in CPU memory moved into a GPU
 * buffer by `writeBuffer`; `free` destroys those buffers once the run is over.
 */
async function uploaded(
  feeds: Record<string, PlainTensor>,
): Promise<{ feeds: Record<string, PlainTensor>; free: () => void }> {
  if (!writeUploads) return { feeds, free: () => {} };
  const gpu: GPUDevice = await ort.env.webgpu.device;
  const made: { dispose(): void }[] = [];
  const out = { ...feeds };
  for (const [name, t] of Object.entries(feeds)) {
    const data = t.data as ArrayBufferView | undefined;
    if (!name.startsWith("past_") || t.device || !data || data.byteLength === 0) continue;
    const size = Math.ceil(data.byteLength / 16) * 16;
    const buffer = gpu.createBuffer({
      size,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const bytes = new Uint8Array(size);
    bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    gpu.queue.writeBuffer(buffer, 0, bytes);
    const tensor = ort.Tensor.fromGpuBuffer(buffer, {
      dataType: t.type,
      dims: t.dims,
      dispose: () => buffer.destroy(),
    });
    made.push(tensor);
    out[name] = { ...t, data: undefined, device: tensor };
  }
  return { feeds: out, free: () => made.forEach((t) => t.dispose()) };
}

/** Model calls since the last turn began: what, when (ms after the turn began), how long. */
let calls: string[] = [];
let turnStart = performance.now();
const at = () => ms(performance.now() - turnStart);
const inner = model.session;
const timed: ModelSession = {
  inputNames: inner.inputNames,
  outputNames: inner.outputNames,
  inputs: inner.inputs,
  has: (name) => inner.has(name),
  release: () => inner.release(),
  // The prefix cache keeps its blocks on the GPU unless an UPLOAD way is being measured.
  deviceCopies: upload ? undefined : inner.deviceCopies,
  run: async (feeds) => {
    const start = at();
    const up = await uploaded(feeds);
    const out = await inner.run(up.feeds).finally(up.free);
    const [rows, tokens] = feeds.input_ids.dims;
    const past = feeds.attention_mask.dims[1] - tokens;
    calls.push(`run ${rows}x${tokens} tokens, past ${past}: ${start}-${at()}`);
    return out;
  },
  decodeLoop: inner.decodeLoop && ((spec) => {
    const start = at();
    let steps = 0;
    const started = uploaded(spec.feeds).then((up) => {
      const loop = inner.decodeLoop!({ ...spec, feeds: up.feeds });
      loop.end.finally(up.free).then(
        () => calls.push(`loop ${steps} steps: ${start}-${at()} (ended)`),
        () => {},
      );
      return loop;
    });
    return {
      next: async () => {
        const tokens = await (await started).next();
        if (tokens) steps++;
        return tokens;
      },
      stop: () => void started.then((l) => l.stop()),
      get end() {
        return started.then((l) => l.end);
      },
    };
  }),
};
// The prefix cache by name: it is off by default on webgpu, and its hits are what this measures.
const engine = await ChatEngine.create({ ...model, session: timed }, {
  id,
  randomWeights: true,
  scheduler: { prefixCacheBytes: DEFAULT_PREFIX_CACHE_BYTES },
});

/** Time to first token of each turn, then of each user. */
const ttfts: Record<string, number[]> = { turn: [], user: [] };
/** Every answer, in order: equal whatever `UPLOAD` says (greedy). */
const answers: string[] = [];

/** Sends `messages`, reads the answer; prints the turn's timeline. */
async function ask(label: string, messages: ChatMessage[]): Promise<string> {
  calls = [];
  turnStart = performance.now();
  const stream = await engine.generate({ messages }, { maxTokens: ANSWER_TOKENS, temperature: 0 });
  let ttft = NaN;
  let text = "";
  let cached = 0;
  let prompt = 0;
  for await (const event of stream) {
    if (event.type === "delta") {
      if (Number.isNaN(ttft) && event.text) ttft = at();
      text += event.text;
    } else {
      cached = event.usage.cachedTokens ?? 0;
      prompt = event.usage.promptTokens;
    }
  }
  const done = at();
  // Let the loop's end (cache read back, kept in the prefix cache) land in this turn's log.
  await new Promise((r) => setTimeout(r, 500));
  console.log(
    `${label}: TTFT ${ttft} ms, answer done ${done} ms, prompt ${prompt}, cached ${cached}`,
  );
  for (const call of calls) console.log(`    ${call}`);
  ttfts[label.split(" ")[0]]?.push(ttft);
  answers.push(text);
  return text;
}

const system = `You are an assistant. Background: ${makeTexts(1, systemWords, 5000)[0]}.`;
const question = (i: number) => `Question ${i + 1}: ${makeTexts(1, 40, 7000 + i)[0]}?`;
await ask("warm-up", [{ role: "user", content: "Hello there" }]);
const history: ChatMessage[] = [{ role: "system", content: system }];
for (let turn = 0; turn < turns; turn++) {
  history.push({ role: "user", content: question(turn) });
  history.push({ role: "assistant", content: await ask(`turn ${turn + 1}`, history) });
}
const shared = `You are an assistant. Background: ${makeTexts(1, systemWords, 6000)[0]}.`;
for (let user = 0; user < turns; user++) {
  await ask(`user ${user + 1}`, [
    { role: "system", content: shared },
    { role: "user", content: question(100 + user) },
  ]);
}
console.log("TTFT ms by turn:", ttfts.turn.join(" "), "| by user:", ttfts.user.join(" "));
const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(answers.join("\0")));
console.log(
  "answers sha-256:",
  [...new Uint8Array(digest)].slice(0, 8).map((b) => b.toString(16).padStart(2, "0")).join(""),
);
console.log("prefix cache:", JSON.stringify(engine.stats().prefixCache));
await engine.dispose();
