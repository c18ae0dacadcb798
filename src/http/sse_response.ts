/**
 * Streams objects as OpenAI-style server-sent events, with backpressure (the next object is only
 * pulled when the client has taken the previous one), cancellation (a client that goes away
 * aborts the producer) and in-band errors (an error after the stream started becomes a final
 * `data: {"error":{...}}` event, or the caller's own error event, then the stream closes). A
 * producer that stops with a `CancelledError` (the request was cancelled: its client left) sends
 * no event: the body fails with that error.
 *
 * @module
 */
import { CancelledError } from "../core/errors.ts";
import { encodeSseData, SSE_DONE } from "../protocol/sse.ts";
import { type OpenAIErrorBody, toWireError } from "../protocol/error_body.ts";
import { logError } from "./error_response.ts";
import type { HttpLogger } from "./logger.ts";

/** Options of {@link sseResponse}. */
export interface SseResponseOptions {
  /** Aborted when the client cancels the stream, so the producer stops. */
  abort?: AbortController;
  logger?: HttpLogger;
  requestId?: string;
  /** Called once when an error event was sent, with the error's code (for metrics). */
  onError?: (code: string) => void;
  /** The `event:` name of an object (the Responses API's `type`); none when left out. */
  eventName?: (value: unknown) => string | undefined;
  /** End with `data: [DONE]` (default true; the Responses API ends with its last event). */
  done?: boolean;
  /**
   * The event sent for an error after the stream started (default: the error body itself,
   * `{"error": {...}}`, as the chat API sends it); its `event:` name comes from `eventName`.
   */
  errorEvent?: (body: OpenAIErrorBody) => unknown;
}

const encoder = new TextEncoder();

/**
 * Wraps an async iterable of JSON-able objects as a `text/event-stream` response ending with
 * `data: [DONE]` (unless `done: false`).
 *
 * @example
 * ```ts
 * import { sseResponse } from "./sse_response.ts";
 * async function* events() {
 *   yield { n: 1 };
 * }
 * const res = sseResponse(events());
 * ```
 */
export function sseResponse(
  events: AsyncIterable<unknown>,
  options: SseResponseOptions = {},
): Response {
  const iterator = events[Symbol.asyncIterator]();
  let finished = false;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (finished) return;
      try {
        const next = await iterator.next();
        // The client may have gone away while we waited: then there is no one to write to.
        if (cancelled) return;
        if (next.done) {
          finished = true;
          if (options.done !== false) controller.enqueue(encoder.encode(SSE_DONE));
          controller.close();
        } else {
          const event = options.eventName?.(next.value);
          controller.enqueue(encoder.encode(encodeSseData(next.value, event)));
        }
      } catch (err) {
        finished = true;
        if (cancelled) return; // the producer stopped because the client left: not an error
        if (err instanceof CancelledError) {
          // The request was cancelled: the connection aborts its signal when it sees the client
          // close, before any write fails. That is the client leaving, not an error to send or
          // count: the body fails with it, and the app counts the request once, as cancelled.
          controller.error(err);
          return;
        }
        const wire = toWireError(err, { requestId: options.requestId });
        logError(err, wire, options);
        options.onError?.(wire.body.error.code ?? "error");
        try {
          const event = options.errorEvent?.(wire.body) ?? wire.body;
          controller.enqueue(encoder.encode(encodeSseData(event, options.eventName?.(event))));
          controller.close();
        } catch {
          // The client already cancelled: nothing to tell.
        }
      }
    },
    async cancel() {
      finished = true;
      cancelled = true;
      // Abort first: a producer parked in an await only reaches return() once it wakes up.
      options.abort?.abort(new DOMException("the client closed the stream", "AbortError"));
      await iterator.return?.().catch(() => {});
    },
  }, { highWaterMark: 0 });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}
