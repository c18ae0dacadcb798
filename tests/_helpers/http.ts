/** Small helpers for calling an app handler directly and reading SSE answers. */
import { readSseData } from "../../src/protocol/sse.ts";

/** An app: `(req, info?) => Promise<Response>`. */
export type Handler = (req: Request) => Promise<Response>;

/** POSTs `body` (JSON-encoded unless a string or bytes) to `path` on a handler. */
export function post(
  app: Handler,
  path: string,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  const payload = typeof body === "string" || body instanceof Uint8Array
    ? body as BodyInit
    : JSON.stringify(body);
  return app(
    new Request(`http://localhost${path}`, {
      method: "POST",
      body: payload,
      headers: { "content-type": "application/json", ...init.headers },
      signal: init.signal,
    }),
  );
}

/** GETs `path` from a handler. */
export function get(
  app: Handler,
  path: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return app(new Request(`http://localhost${path}`, { headers }));
}

/** Reads every SSE `data` payload of a response: JSON events parsed, `[DONE]` kept as a string. */
export async function sseEvents(res: Response): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const data of readSseData(res.body!)) {
    out.push(data === "[DONE]" ? data : JSON.parse(data));
  }
  return out;
}
