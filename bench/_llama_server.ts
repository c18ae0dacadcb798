/**
 * llama.cpp's `llama-server` as the peer in the benchmarks: finds a built binary, writes the bench
 * models as GGUF (the same random weights and vocabulary as `demo/chat-bench` and
 * `demo/embed-bench`), and runs the server the way a user serving many streams on this CPU would
 * (threads = cores, `-np 16` slots, continuous batching; for embeddings `--embedding` with the
 * model's pooling and a physical batch that holds many inputs).
 *
 * The binary comes from `bench/build_llama_server.sh` (llama.cpp's source as the npm package
 * `node-llama-cpp` ships it; not built in CI). Without one the llama.cpp rows are skipped and
 * {@link LLAMA_BUILD_HINT} says how to get it.
 *
 * @module
 */

import { join } from "node:path";
import { DEMO_MODEL_SPECS } from "../src/engine/generated_models/demo_models.ts";
import { type LlamaGgufType, writeLlamaGguf } from "../fixtures/generated_models/llama_gguf.ts";
import {
  BERT_GGUF_VERSION,
  type BertGgufType,
  writeBertGguf,
} from "../fixtures/generated_models/bert_gguf.ts";
import type { BertEncoderSpec } from "../src/engine/generated_models/bert_encoder.ts";
import type { DecoderFolderSpec } from "../src/engine/generated_models/model_folder.ts";
import { stopChild } from "./_proc.ts";

/** How to build the binary, printed when it is missing. */
export const LLAMA_BUILD_HINT =
  "llama.cpp rows skipped: no llama-server found. Build it (~20 min on 2 cores, once) with " +
  "bench/build_llama_server.sh, or point SVC_BENCH_LLAMA_SERVER at a llama-server binary.";

/**
 * The llama-server binary: `$SVC_BENCH_LLAMA_SERVER`, else the newest build under
 * `~/.cache/svc/llama.cpp/<commit>/llama-server`; undefined when there is none.
 */
export async function findLlamaServer(): Promise<string | undefined> {
  const fromEnv = Deno.env.get("SVC_BENCH_LLAMA_SERVER");
  if (fromEnv) return fromEnv;
  const cache = join(
    Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/", ".cache"),
    "svc",
    "llama.cpp",
  );
  let best: { path: string; mtime: number } | undefined;
  try {
    for await (const entry of Deno.readDir(cache)) {
      const path = join(cache, entry.name, "llama-server");
      const stat = await Deno.stat(path).catch(() => undefined);
      const mtime = stat?.mtime?.getTime() ?? 0;
      if (stat?.isFile && (!best || mtime > best.mtime)) best = { path, mtime };
    }
  } catch {
    return undefined;
  }
  return best?.path;
}

/**
 * The GGUF file of demo model `id` in `type`, written under `<cacheDir>/gguf/` unless a copy from
 * the same spec is there: a chat model as llama.cpp's `llama` architecture (F16, Q8_0, Q4_0), an
 * embedding model as its `bert` architecture (F32, F16, Q8_0).
 */
export async function benchGguf(
  cacheDir: string,
  id: keyof typeof DEMO_MODEL_SPECS,
  type: LlamaGgufType | BertGgufType,
): Promise<string> {
  const demo = DEMO_MODEL_SPECS[id];
  const write = demo.kind === "chat" && type !== "F32"
    ? (path: string) => writeLlamaGguf(path, demo.spec as DecoderFolderSpec, type, id)
    : demo.kind === "embedding" && type !== "Q4_0"
    ? (path: string) => writeBertGguf(path, demo.spec as BertEncoderSpec, type, id)
    : undefined;
  if (!write) throw new Error(`no ${type} GGUF of ${demo.kind} model ${id}`);
  const dir = join(cacheDir, "gguf");
  const path = join(dir, `${id.replace("/", "--")}.${type}.gguf`);
  const writer = demo.kind === "chat" ? {} : { writer: `bert_gguf ${BERT_GGUF_VERSION}` };
  const stamp = JSON.stringify({ id, type, spec: demo.spec, ...writer });
  const stampFile = `${path}.json`;
  if ((await Deno.readTextFile(stampFile).catch(() => "")) === stamp) return path;
  await Deno.mkdir(dir, { recursive: true });
  await write(`${path}.tmp`);
  await Deno.rename(`${path}.tmp`, path);
  await Deno.writeTextFile(stampFile, stamp);
  return path;
}

/** Options of {@link LlamaServer.start}. */
export interface LlamaServerOptions {
  /** Threads for decode and prompt batches (default: the machine's cores). */
  threads?: number;
  /** Parallel slots (`-np`; default 16). */
  parallel?: number;
  /** Context per slot in tokens (default 512). */
  slotContext?: number;
  /** stderr goes here (appended), else it is discarded. */
  logFile?: string;
  /**
   * Serve embeddings (`--embedding --pooling <pooling>`). An encoder has no KV cache, so every
   * input must fit one physical batch: `-b` and `-ub` are `ubatch` tokens (default 2048).
   */
  embedding?: { pooling: "mean" | "cls"; ubatch?: number };
}

/** A running llama-server subprocess. */
export class LlamaServer {
  readonly baseUrl: string;
  readonly pid: number;
  #child: Deno.ChildProcess;

  private constructor(child: Deno.ChildProcess, baseUrl: string) {
    this.#child = child;
    this.pid = child.pid;
    this.baseUrl = baseUrl;
  }

  /** Starts `binary` on `gguf` and waits (up to 120 s) until `/health` answers 200. */
  static async start(
    binary: string,
    gguf: string,
    options: LlamaServerOptions = {},
  ): Promise<LlamaServer> {
    const threads = options.threads ?? navigator.hardwareConcurrency;
    const parallel = options.parallel ?? 16;
    const port = freePort();
    const child = new Deno.Command(binary, {
      args: [
        ...["-m", gguf, "--host", "127.0.0.1", "--port", String(port)],
        ...["-t", String(threads), "-tb", String(threads)],
        ...["-np", String(parallel), "-cb"],
        ...["-c", String(parallel * (options.slotContext ?? 512))],
        ...(options.embedding
          ? [
            ...["--embedding", "--pooling", options.embedding.pooling],
            ...["-b", String(options.embedding.ubatch ?? 2048)],
            ...["-ub", String(options.embedding.ubatch ?? 2048)],
          ]
          : []),
        "--no-webui",
      ],
      stdin: "null",
      stdout: "null",
      stderr: options.logFile ? "piped" : "null",
    }).spawn();
    if (options.logFile) {
      const file = await Deno.open(options.logFile, { create: true, append: true });
      child.stderr.pipeTo(file.writable).catch(() => {});
    }
    const server = new LlamaServer(child, `http://127.0.0.1:${port}`);
    const deadline = performance.now() + 120_000;
    while (performance.now() < deadline) {
      const ok = await fetch(`${server.baseUrl}/health`).then(async (r) => {
        await r.body?.cancel();
        return r.ok;
      }).catch(() => false);
      if (ok) return server;
      await new Promise((r) => setTimeout(r, 200));
    }
    await server.stop();
    throw new Error(`llama-server on ${gguf} did not become healthy in 120 s`);
  }

  /**
   * Token ids of `text` as llama.cpp tokenizes it (special tokens parsed; with `addSpecial`, the
   * ones the model adds, such as BERT's [CLS] and [SEP]).
   */
  async tokenize(text: string, options: { addSpecial?: boolean } = {}): Promise<number[]> {
    const res = await fetch(`${this.baseUrl}/tokenize`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        content: text,
        add_special: options.addSpecial ?? false,
        parse_special: true,
      }),
    });
    if (!res.ok) throw new Error(`/tokenize failed: ${res.status} ${await res.text()}`);
    return (await res.json()).tokens;
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s). */
  stop(): Promise<void> {
    return stopChild(this.#child);
  }
}

/** A free loopback port (bound and released at once). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
