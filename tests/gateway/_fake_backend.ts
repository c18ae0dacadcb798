// Fake OpenAI-compatible backends with controllable latency, failures and streams, usable as a
// plain handler (in-process transport) or served on 127.0.0.1:0 (real sockets).
import { Backend, type BackendOptions } from "../../src/gateway/backend.ts";
import {
  type BackendInstanceConfig,
  validateBackendConfig,
} from "../../src/gateway/backend_config.ts";
import { HandlerTransport } from "../../src/gateway/transport.ts";

/** What a fake does with the next requests. */
export interface FakeBehavior {
  /** Wait this long before answering (aborted requests stop waiting). */
  delayMs?: number;
  /** Answer with this status and an OpenAI error body. */
  status?: number;
  /** With `status`: say when to come back (`Retry-After`, seconds). */
  retryAfterSeconds?: number;
  /** Streams: number of content chunks (default 3) and the pause between them. */
  chunks?: number;
  chunkDelayMs?: number;
  /** Streams: after this many chunks, error the body (a broken connection). */
  breakAfter?: number;
  /** Streams: end cleanly but without `data: [DONE]`. */
  omitDone?: boolean;
  /** Embeddings: answer 400 when an input equals this. */
  rejectInput?: string;
  /** `/health` status (default 200); 404 simulates a server without it. */
  healthStatus?: number;
  /** `/health`: wait this long before answering (a probe that gives up stops the wait). */
  healthDelayMs?: number;
}

/** One request the fake saw. */
export interface SeenRequest {
  path: string;
  body: Record<string, unknown>;
  headers: Headers;
  at: number;
}

const encoder = new TextEncoder();

export class FakeEngine {
  readonly name: string;
  behavior: FakeBehavior;
  readonly seen: SeenRequest[] = [];
  healthChecks = 0;
  inFlight = 0;
  maxInFlight = 0;
  aborted = 0;
  #gate: Promise<void> | null = null;
  #server: Deno.HttpServer | null = null;

  constructor(name: string, behavior: FakeBehavior = {}) {
    this.name = name;
    this.behavior = behavior;
  }

  /** Holds every request (after it is recorded) until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.#gate = new Promise((r) => (release = r));
    return () => {
      this.#gate = null;
      release();
    };
  }

  /** Requests seen on a path (e.g. "/v1/chat/completions"). */
  count(path = "/v1/chat/completions"): number {
    return this.seen.filter((r) => r.path === path).length;
  }

  handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const b = this.behavior;
    if (url.pathname === "/health") {
      this.healthChecks++;
      if (b.healthDelayMs) await sleep(b.healthDelayMs, req.signal);
      return new Response(JSON.stringify({ status: "ok" }), { status: b.healthStatus ?? 200 });
    }
    if (req.method === "GET" && url.pathname === "/v1/models") {
      this.healthChecks++;
      return Response.json({ object: "list", data: [] });
    }
    const body = await req.json() as Record<string, unknown>;
    this.seen.push({ path: url.pathname, body, headers: req.headers, at: performance.now() });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let streaming = false;
    try {
      if (this.#gate) await this.#gate;
      if (b.delayMs) await sleep(b.delayMs, req.signal);
      if (b.status !== undefined && b.status >= 400) {
        const headers: Record<string, string> = b.retryAfterSeconds === undefined
          ? {}
          : { "retry-after": String(b.retryAfterSeconds) };
        return Response.json({
          error: { message: `fake ${this.name} failed`, type: "x", param: null, code: null },
        }, { status: b.status, headers });
      }
      if (url.pathname === "/v1/embeddings") {
        const inputs = [body.input].flat();
        if (b.rejectInput !== undefined && inputs.includes(b.rejectInput)) {
          return Response.json({
            error: {
              message: `bad input '${b.rejectInput}'`,
              type: "x",
              param: "input",
              code: null,
            },
          }, { status: 400 });
        }
        return Response.json(embeddingAnswer(body));
      }
      if (body.stream === true) {
        streaming = true;
        const options = body.stream_options as { include_usage?: boolean } | undefined;
        return new Response(this.#stream(req.signal, options?.include_usage === true), {
          headers: { "content-type": "text/event-stream" },
        });
      }
      return Response.json({
        id: "x",
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: `from ${this.name}` } }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    } catch (err) {
      if (req.signal.aborted) this.aborted++;
      throw err;
    } finally {
      if (!streaming) this.inFlight--;
    }
  };

  // With `includeUsage`, as OpenAI and Svc stream: `usage: null` on each chunk, then a chunk
  // with no choices and the usage (5 prompt tokens, one completion token per chunk).
  #stream(signal: AbortSignal, includeUsage: boolean): ReadableStream<Uint8Array> {
    const b = this.behavior;
    const chunks = b.chunks ?? 3;
    let i = 0;
    const done = () => this.inFlight--;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (i > 0 && b.chunkDelayMs) {
          try {
            await sleep(b.chunkDelayMs, signal);
          } catch {
            return;
          }
        }
        if (b.breakAfter !== undefined && i >= b.breakAfter) {
          done();
          controller.error(new Error("fake backend crashed mid-stream"));
          return;
        }
        if (i < chunks) {
          const data = {
            choices: [{ index: 0, delta: { content: `${this.name}-${i}` } }],
            ...(includeUsage ? { usage: null } : {}),
          };
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(data)}\n\n`));
          i++;
          return;
        }
        if (includeUsage && i === chunks) {
          const usage = { prompt_tokens: 5, completion_tokens: chunks, total_tokens: 5 + chunks };
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ choices: [], usage })}\n\n`));
          i++;
          return;
        }
        if (!b.omitDone) controller.enqueue(encoder.encode("data: [DONE]\n\n"));
        done();
        controller.close();
      },
      cancel: () => {
        this.aborted++;
        done();
      },
    }, { highWaterMark: 0 });
  }

  /** Serves the fake on 127.0.0.1:0; returns its base URL (ending in /v1). */
  serve(): string {
    this.#server = Deno.serve(
      {
        hostname: "127.0.0.1",
        port: 0,
        onListen: () => {},
        onError: () => new Response(null, { status: 500 }),
      },
      (req) => this.handler(req),
    );
    return `http://127.0.0.1:${(this.#server.addr as Deno.NetAddr).port}/v1`;
  }

  async close(): Promise<void> {
    await this.#server?.shutdown();
  }

  /** A Backend over this fake's handler (no socket). */
  backend(config: Partial<BackendInstanceConfig> = {}, options: BackendOptions = {}): Backend {
    return new Backend(
      validateBackendConfig({
        id: this.name,
        baseUrl: "http://127.0.0.1:9/v1",
        kind: "llm",
        models: ["m"],
        ...config,
      }),
      { transport: new HandlerTransport(this.handler), ...options },
    );
  }
}

function embeddingAnswer(body: Record<string, unknown>): unknown {
  const input = body.input;
  const inputs = typeof input === "string" ? [input] : input as unknown[];
  return {
    object: "list",
    model: body.model,
    data: inputs.map((x, i) => ({
      object: "embedding",
      index: i,
      embedding: [typeof x === "string" ? x.length : 0, i],
    })),
    usage: { prompt_tokens: inputs.length * 2, total_tokens: inputs.length * 2 },
  };
}

/** Resolves after `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A TCP server that reads a request and closes the connection without answering (a crashed
 * engine). Returns its base URL and a close function.
 */
export function startClosingServer(): {
  url: string;
  accepted: () => number;
  close: () => Promise<void>;
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const conns = new Set<Deno.Conn>();
  const loop = (async () => {
    for await (const conn of listener) {
      accepted++;
      conns.add(conn);
      (async () => {
        const buf = new Uint8Array(4096);
        try {
          await conn.read(buf);
        } catch {
          // ignore
        }
        try {
          conn.close();
        } catch {
          // already closed
        }
        conns.delete(conn);
      })();
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/v1`,
    accepted: () => accepted,
    close: async () => {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      await loop;
    },
  };
}

/** Reads a whole SSE body into its data payloads. */
export async function readEvents(res: Response): Promise<string[]> {
  const text = await res.text();
  return text.split("\n\n").filter((e) => e.startsWith("data:")).map((e) => e.slice(5).trim());
}

/** Waits until `cond()` holds (polling), failing after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** A logger that drops everything (keeps test output clean). */
export const SILENT = {
  name: "test",
  debug() {},
  info() {},
  warn() {},
  error() {},
  isEnabled: () => false,
};

/** A chat request body whose message is `tag` (the fakes record it). */
export function chat(tag: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "m", messages: [{ role: "user", content: tag }], ...extra };
}

/** The tags of the chat requests a fake saw, in arrival order. */
export function tags(fake: FakeEngine): string[] {
  return fake.seen.filter((r) => r.path === "/v1/chat/completions").map((r) =>
    (r.body.messages as { content: string }[])[0].content
  );
}
