/**
 * JSON answers that never hold the server's thread for long: a small answer is written at once
 * (its bytes known to the HTTP writer and to a gateway in the same process); a big one (a prompt's
 * log-probabilities, thousands of embeddings) is written a slice at a time as the client reads,
 * so other requests run between slices.
 *
 * @module
 */

import { JsonTextWriter } from "../protocol/json_text.ts";
import { bytesResponse } from "./http1/known_body.ts";
import { sleep } from "../core/sleep.ts";

/** Answers up to this many characters are written at once (one buffer, with Content-Length). */
const AT_ONCE_CHARS = 256 * 1024;
/**
 * Each later slice, then others run while it is sent: ~10 ms of work here, and few enough turns
 * (each waits for a timer, 1-4 ms) that a 26 MB answer is not delayed much more than writing it.
 */
const SLICE_CHARS = 1 << 20;

const ENCODER = new TextEncoder();

/**
 * `Response.json(value, init)`, written in slices when it is big (`JSON.stringify` of tens of MB
 * holds the thread for seconds). An error in a later slice (a `toJSON` that throws) ends the
 * body early, as any failing stream does.
 *
 * @example
 * ```ts
 * import { jsonResponse } from "./json_response.ts";
 * const res = jsonResponse({ ok: true }, { status: 201 });
 * res.status; // 201
 * ```
 */
export function jsonResponse(value: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  const writer = new JsonTextWriter(value);
  const first = writer.next(AT_ONCE_CHARS) ?? "";
  if (writer.done) return bytesResponse(ENCODER.encode(first), { ...init, headers });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(ENCODER.encode(first));
    },
    // Called only when the client reads on (a high-water mark of 0): a slow client holds the
    // rest unwritten, not in memory. The wait lets other requests run: a socket that takes every
    // write at once completes them without returning to the event loop, so slices alone would
    // still be one long block.
    async pull(controller) {
      await sleep(0);
      const slice = writer.next(SLICE_CHARS);
      if (slice !== null) controller.enqueue(ENCODER.encode(slice));
      if (writer.done) controller.close();
    },
  }, { highWaterMark: 0 });
  return new Response(body, { ...init, headers });
}
