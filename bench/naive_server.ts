/**
 * The baseline "what a user would write" embedding server: one transformers.js
 * `pipeline("feature-extraction")` and `Deno.serve`, one pipeline call per request, no batching
 * across requests. It answers `POST /v1/embeddings` with an OpenAI-shaped list so the benchmark
 * drives it with the same client as our server.
 *
 * It is a deliberately plain baseline for the benchmarks, not part of Svc. Run it alone with
 * `deno run -A bench/naive_server.ts <model folder> [port]`.
 *
 * @module
 */

import { env, pipeline } from "@huggingface/transformers";

/** Options of {@link startNaiveServer}. */
export interface NaiveServerOptions {
  /** Weights to load (`q8` picks `onnx/model_quantized.onnx`). */
  dtype?: "fp32" | "q8";
  hostname?: string;
  /** 0 picks a free port. */
  port?: number;
}

/** A running naive server. */
export interface NaiveServer {
  /** `http://host:port/v1`. */
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * Loads `folder` with a transformers.js feature-extraction pipeline (native CPU) and serves it.
 *
 * @example
 * ```ts
 * const server = await startNaiveServer("/tmp/cache/demo/embed-bench", { port: 0 });
 * const res = await fetch(`${server.baseUrl}/embeddings`, {
 *   method: "POST",
 *   body: JSON.stringify({ input: "hello" }),
 * });
 * console.log((await res.json()).data[0].embedding.length);
 * await server.stop();
 * ```
 */
export async function startNaiveServer(
  folder: string,
  options: NaiveServerOptions = {},
): Promise<NaiveServer> {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  const extractor = await pipeline("feature-extraction", folder, {
    device: "cpu",
    dtype: options.dtype ?? "q8",
    local_files_only: true,
  });
  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/embeddings") {
      return Response.json({ error: { message: "not found" } }, { status: 404 });
    }
    try {
      const body = await req.json();
      const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
      const output = await extractor(input, { pooling: "mean", normalize: true });
      const vectors = output.tolist() as number[][];
      return Response.json({
        object: "list",
        data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
        model: body.model ?? "naive",
      });
    } catch (err) {
      return Response.json({ error: { message: String(err) } }, { status: 500 });
    }
  });
  const { hostname, port } = server.addr;
  return {
    baseUrl: `http://${hostname}:${port}/v1`,
    stop: async () => {
      await server.shutdown();
      await extractor.dispose();
    },
  };
}

if (import.meta.main) {
  const [folder, port] = Deno.args;
  if (!folder) {
    console.error("usage: deno run -A bench/naive_server.ts <model folder> [port]");
    Deno.exit(2);
  }
  const server = await startNaiveServer(folder, { port: Number(port ?? 0) });
  console.log(`naive embedding server on ${server.baseUrl}`);
}
