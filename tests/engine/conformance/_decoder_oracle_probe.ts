// Runs conformance decoder folders on one device, twice: through transformers.js' own
// `generate()` (the oracle) and through our engine server over HTTP, alone and batched with
// prompts of other lengths. Prints one JSON line per case. A process of its own per device,
// because one process holds either the native or the web ONNX Runtime (src/engine/runtime.ts).
//
// Usage: deno run -A _decoder_oracle_probe.ts <device> '<[{"name","folder","dtype"}]>'
import { errorMessage } from "../../../src/core/errors.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { loadRuntime, type ResolvedDevice } from "../../../src/engine/runtime.ts";
import type { Dtype } from "../../../src/engine/dtype.ts";
import { onnxBaseNameIn } from "../../../src/engine/onnx_file.ts";
import { startEngineServer } from "../../../src/server/engine_server.ts";
import { DEFAULT_PREFIX_CACHE_BYTES } from "../../../src/engine/chat/prefix_cache.ts";

/** Prompts of different lengths, so batched rows are padded differently. */
export const ORACLE_PROMPTS = [
  "Hi",
  "The quick brown fox jumps over the lazy dog, then",
  "Once upon a time there was",
];
/** Tokens generated per prompt. */
export const ORACLE_TOKENS = 12;

/** A prompt of several prefix-cache blocks that the prefix prompts share. */
const SHARED =
  "You are a careful assistant for a small bakery. Answer questions about bread, opening hours, " +
  "prices and allergies in one short sentence, and never invent a product that is not listed.";
/**
 * Prompts that start alike, sent one after another so the later ones find the earlier ones'
 * cache; the last is a second turn (the first prompt, its answer, more text), added by the probe.
 */
export const PREFIX_PROMPTS = [
  SHARED,
  `${SHARED} Question: is the rye bread vegan?`,
  `${SHARED} Question: when do you open on Sundays?`,
];

/** What the probe prints for one case. */
export interface OracleResult {
  name: string;
  dtype: string;
  /** transformers.js generate(), one prompt at a time. */
  oracle: string[];
  /** Our engine over HTTP, one request at a time. */
  alone: string[];
  /** Our engine over HTTP, all prompts at once (one batch). */
  batched: string[];
  /** transformers.js on {@link PREFIX_PROMPTS} and the second turn. */
  prefixOracle: string[];
  /** Our engine on the same prompts, one after another (later ones hit the prefix cache). */
  prefixed: string[];
  /** `usage.prompt_tokens_details.cached_tokens` of each of {@link prefixed}. */
  cachedTokens: number[];
  /** Our engine on the prefix prompts but the first, again, all at once (every one a hit). */
  prefixedBatched: string[];
  /**
   * Whether the engine kept a prefix cache (/metrics); off for files batched one sequence at a
   * time (their activations' scale depends on every token of a call).
   */
  prefixCache: boolean;
  error?: string;
}

if (import.meta.main) {
  setupLogger("error");
  const device = Deno.args[0] as ResolvedDevice;
  const cases = JSON.parse(Deno.args[1]) as { name: string; folder: string; dtype: Dtype }[];
  const runtime = await loadRuntime(device);
  const t = runtime.transformers;
  t.env.allowRemoteModels = false;
  for (const c of cases) {
    const result: OracleResult = {
      name: c.name,
      dtype: c.dtype,
      oracle: [],
      alone: [],
      batched: [],
      prefixOracle: [],
      prefixed: [],
      cachedTokens: [],
      prefixedBatched: [],
      prefixCache: false,
    };
    try {
      const oracle = await loadOracle(t, c.folder, c.dtype, device);
      result.oracle = await oracle.texts(ORACLE_PROMPTS);
      const [first] = await oracle.texts([PREFIX_PROMPTS[0]]);
      const prefixPrompts = [...PREFIX_PROMPTS, `${PREFIX_PROMPTS[0]}${first} Thank you! And`];
      result.prefixOracle = await oracle.texts(prefixPrompts);
      await oracle.dispose();
      const server = await startEngineServer({
        model: c.folder,
        kind: "chat",
        device,
        dtype: c.dtype,
        // Correctness only: a software WebGPU adapter (llvmpipe) is fine here.
        allowFallbackAdapter: true,
        hostname: "127.0.0.1",
        port: 0,
        id: "m",
        cacheDir: await Deno.makeTempDir(),
        // By name: webgpu starts without one (prefix_cache.ts), and its hits are checked here.
        scheduler: { prefixCacheBytes: DEFAULT_PREFIX_CACHE_BYTES },
      });
      try {
        await server.ready;
        for (const prompt of ORACLE_PROMPTS) {
          result.alone.push(await complete(server.baseUrl, prompt));
        }
        result.batched = await Promise.all(ORACLE_PROMPTS.map((p) => complete(server.baseUrl, p)));
        for (const prompt of prefixPrompts) {
          const { text, cached } = await completion(server.baseUrl, prompt);
          result.prefixed.push(text);
          result.cachedTokens.push(cached);
        }
        result.prefixedBatched = await Promise.all(
          prefixPrompts.slice(1).map((p) => complete(server.baseUrl, p)),
        );
        const metrics = await (await fetch(new URL("/metrics", server.baseUrl))).text();
        result.prefixCache = metrics.includes("svc_prefix_cache_budget_bytes{");
      } finally {
        await server.stop();
      }
    } catch (err) {
      result.error = errorMessage(err);
    }
    console.log(JSON.stringify(result));
  }
}

/** transformers.js' own greedy generate() on a folder, one prompt at a time. */
async function loadOracle(
  t: Awaited<ReturnType<typeof loadRuntime>>["transformers"],
  folder: string,
  dtype: Dtype,
  device: ResolvedDevice,
): Promise<{ texts(prompts: readonly string[]): Promise<string[]>; dispose(): Promise<unknown> }> {
  const runtime = await loadRuntime(device);
  const tokenizer = await t.AutoTokenizer.from_pretrained(folder, { local_files_only: true });
  const model = await t.AutoModelForCausalLM.from_pretrained(folder, {
    local_files_only: true,
    dtype,
    device: runtime.deviceOption(device),
    model_file_name: await onnxBaseNameIn(folder, dtype),
    session_options: runtime.sessionOptions(device, "chat"),
  } as never);
  return {
    async texts(prompts) {
      const texts: string[] = [];
      for (const prompt of prompts) {
        const inputs = tokenizer(prompt);
        const out = await model.generate({
          ...inputs,
          max_new_tokens: ORACLE_TOKENS,
          do_sample: false,
        } as never) as { tolist(): bigint[][] };
        const ids = out.tolist()[0].slice(inputs.input_ids.dims[1]).map(Number);
        texts.push(tokenizer.decode(ids, { skip_special_tokens: true }));
      }
      return texts;
    },
    dispose: () => model.dispose(),
  };
}

async function complete(baseUrl: string, prompt: string): Promise<string> {
  return (await completion(baseUrl, prompt)).text;
}

async function completion(
  baseUrl: string,
  prompt: string,
): Promise<{ text: string; cached: number }> {
  const res = await fetch(`${baseUrl}/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", prompt, max_tokens: ORACLE_TOKENS, temperature: 0 }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  return { text: body.choices[0].text, cached: body.usage.prompt_tokens_details.cached_tokens };
}
