/**
 * How the gateway reaches one backend. Both kinds speak `Request` → `Response`, so routing,
 * retries, streaming and metrics have one code path whether the engine runs in this process or on
 * another machine.
 *
 * @module
 */
import type { Http1Client } from "../http/http1/client.ts";
import { knownBody } from "../http/http1/known_body.ts";

/** Sends requests to one backend. The request's `signal` cancels it (and its response body). */
export interface BackendTransport {
  /** `remote`: over the network; `in_process`: a handler called directly. */
  readonly kind: "remote" | "in_process";
  /** Sends one request to the backend. */
  send(request: Request): Promise<Response>;
  /**
   * Same as `send(new Request(url, init))`, where the transport can skip building the `Request`
   * (fetch copies it anyway): the gateway's hot path uses it when present.
   */
  sendInit?(url: string, init: BackendRequestInit): Promise<Response>;
}

/** A request as the gateway sends it: a JSON body as text, or none. */
export interface BackendRequestInit {
  /** `GET` (probes) or `POST` (inference). */
  method: "GET" | "POST";
  /** The backend's key and headers, the request id, the content type. */
  headers: Record<string, string>;
  /** The JSON body. */
  body?: string;
  /** Aborts the request and its response body. */
  signal: AbortSignal;
}

/** A plain HTTP app: what the engine server exposes and what Deno.serve runs. */
export type RequestHandler = (request: Request) => Promise<Response>;

/**
 * A remote OpenAI-compatible server (another Svc engine, vLLM, llama.cpp, Ollama, TEI, a cloud
 * API) reached with `fetch`, or for `http://` URLs with our own HTTP/1.1 client when one is given
 * (the gateway's hot path: it costs less CPU per request than fetch).
 *
 * @example
 * ```ts
 * import { RemoteTransport } from "./transport.ts";
 * const transport = new RemoteTransport();
 * // await transport.send(new Request("http://127.0.0.1:8001/v1/models"));
 * ```
 */
export class RemoteTransport implements BackendTransport {
  readonly kind = "remote" as const;
  #fetch: ((request: Request) => Promise<Response>) | undefined;
  #client: Http1Client | undefined;

  /**
   * `fetch` may be replaced (a `Deno.HttpClient`-bound fetch, or a test double); `client` sends
   * the `http://` requests of {@link sendInit} unless a proxy is configured in the environment
   * (`HTTP_PROXY`, `ALL_PROXY`), which only fetch honours.
   */
  constructor(
    options: { fetch?: (request: Request) => Promise<Response>; client?: Http1Client } = {},
  ) {
    this.#fetch = options.fetch;
    this.#client = options.fetch === undefined && !proxyConfigured() ? options.client : undefined;
  }

  send(request: Request): Promise<Response> {
    return this.#fetch ? this.#fetch(request) : fetch(request);
  }

  sendInit(url: string, init: BackendRequestInit): Promise<Response> {
    if (this.#client !== undefined && url.startsWith("http://")) {
      return this.#client.request(url, init);
    }
    return this.#fetch ? this.#fetch(new Request(url, init)) : fetch(url, init);
  }
}

// Whether fetch would send plain-HTTP requests through a proxy (environment variables it reads).
function proxyConfigured(): boolean {
  try {
    return ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"].some((name) =>
      (Deno.env.get(name) ?? "") !== ""
    );
  } catch {
    return true; // cannot tell without env access: keep fetch's behaviour
  }
}

/**
 * An engine in this process, reached by calling its app handler (the same app `Deno.serve` would
 * run), so no socket and no serialization beyond the HTTP bodies themselves.
 *
 * @example
 * ```ts
 * import { HandlerTransport } from "./transport.ts";
 * const transport = new HandlerTransport(() => Promise.resolve(Response.json({ data: [] })));
 * const res = await transport.send(new Request("http://in-process/v1/models"));
 * ```
 */
export class HandlerTransport implements BackendTransport {
  readonly kind = "in_process" as const;
  #handler: RequestHandler;

  constructor(handler: RequestHandler) {
    this.#handler = handler;
  }

  send(request: Request): Promise<Response> {
    // Same contract as fetch: an aborted request rejects at once, whatever the handler does.
    const signal = request.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#handler(request).then(
        (res) => {
          signal.removeEventListener("abort", onAbort);
          // Answered after the abort: nobody will read the body, so release it.
          if (signal.aborted) res.body?.cancel().catch(() => {});
          // A body already in memory has nothing left to abort: passed on as it is (no stream).
          if (res.body === null || signal.aborted || knownBody(res) !== undefined) {
            return resolve(res);
          }
          resolve(
            new Response(abortableBody(res.body, signal), {
              status: res.status,
              statusText: res.statusText,
              headers: res.headers,
            }),
          );
        },
        (err) => {
          signal.removeEventListener("abort", onAbort);
          reject(err);
        },
      );
    });
  }
}

// Like a fetch body: aborting the request errors the body and cancels its source.
function abortableBody(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let onAbort = () => {};
  const detach = () => signal.removeEventListener("abort", onAbort);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      onAbort = () => {
        try {
          controller.error(signal.reason);
        } catch {
          // Already closed.
        }
        reader.cancel(signal.reason).catch(() => {});
      };
      signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (signal.aborted) return;
        if (done) {
          detach();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (err) {
        detach();
        if (!signal.aborted) controller.error(err);
      }
    },
    cancel(reason) {
      detach();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
