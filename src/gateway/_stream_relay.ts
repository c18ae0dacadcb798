/**
 * Passes an upstream SSE body through to the client chunk by chunk (pulled, so the client's pace
 * sets the upstream's), and makes sure a stream that breaks is never a silent truncation: when
 * the upstream errors, stalls past the idle timeout, or ends without `data: [DONE]` (and without
 * an error event of its own), a final `data: {"error":{...}}` event is sent before closing.
 *
 * @module
 */
import { CancelledError, errorMessage, ServiceError, SvcException } from "../core/errors.ts";
import { toWireError } from "../protocol/error_body.ts";
import { encodeSseData } from "../protocol/sse.ts";

/** How a relayed stream ended. */
export type RelayOutcome = "success" | "failure" | "cancelled";

/** Options of {@link relayStream}. */
export interface RelayOptions {
  /** The upstream body's reader, with its first chunk already read. */
  reader: ReadableStreamDefaultReader<Uint8Array>;
  first: Uint8Array;
  /** Longest wait for the next chunk, in ms. */
  idleTimeoutMs: number;
  /** Names the backend in the error event. */
  backendId: string;
  /** Aborts the upstream request. */
  abortUpstream: (reason: unknown) => void;
  /**
   * Why the request was aborted from our side, or undefined: a client that went away, or the
   * gateway shutting down (so a read error is not the backend's fault).
   */
  abortedBy: () => unknown;
  /** Called once, when the stream ends for any reason. */
  onEnd: (outcome: RelayOutcome, error?: Error) => void;
}

const encoder = new TextEncoder();
const TAIL_CHARS = 4096;

/**
 * Builds the client-facing body of a relayed stream.
 *
 * @example
 * ```ts
 * // const body = relayStream({ reader, first, idleTimeoutMs: 60000, backendId: "a", ... });
 * // return new Response(body, { headers: { "content-type": "text/event-stream" } });
 * ```
 */
export function relayStream(options: RelayOptions): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let tail = "";
  let firstSent = false;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const end = (outcome: RelayOutcome, error?: Error): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    options.onEnd(outcome, error);
  };
  const remember = (chunk: Uint8Array): void => {
    tail = (tail + decoder.decode(chunk, { stream: true })).slice(-TAIL_CHARS);
  };
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, err: Error): void => {
    try {
      controller.enqueue(encoder.encode(encodeSseData(toWireError(err).body)));
      controller.close();
    } catch {
      // The client is gone already.
    }
    options.abortUpstream(err);
    options.reader.cancel(err).catch(() => {});
    end("failure", err);
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!firstSent) {
        firstSent = true;
        remember(options.first);
        controller.enqueue(options.first);
        return;
      }
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await new Promise<ReadableStreamReadResult<Uint8Array>>((resolve, reject) => {
          timer = setTimeout(() => {
            reject(
              new ServiceError(
                `The backend '${options.backendId}' sent nothing for ${options.idleTimeoutMs} ms ` +
                  "in the middle of a stream; the stream was cut. Retry the request.",
                { code: "backend_timeout" },
              ),
            );
          }, options.idleTimeoutMs);
          options.reader.read().then(resolve, reject);
        });
      } catch (err) {
        clearTimeout(timer);
        const reason = options.abortedBy();
        if (reason !== undefined) {
          if (reason instanceof SvcException && !(reason instanceof CancelledError)) {
            // Shutdown: tell a client that is still reading, like any other break.
            fail(controller, reason);
          } else {
            try {
              controller.error(new CancelledError());
            } catch {
              // Already closed.
            }
          }
          end("cancelled");
          return;
        }
        fail(controller, asStreamError(err, options.backendId));
        return;
      } finally {
        clearTimeout(timer);
      }
      if (!result.done) {
        remember(result.value);
        controller.enqueue(result.value);
        return;
      }
      remember(new Uint8Array());
      const last = lastEvent(tail);
      if (/^data: ?\[DONE\]/.test(last)) {
        controller.close();
        end("success");
      } else if (/^data: ?\{\s*"error"/.test(last)) {
        // The backend reported its own error in-band: the client has it already.
        controller.close();
        end(
          "failure",
          new ServiceError(`the backend '${options.backendId}' ended its stream with an error`),
        );
      } else {
        fail(
          controller,
          new ServiceError(
            `The backend '${options.backendId}' ended the stream before it was complete ` +
              "(no [DONE]); the answer is truncated. Retry the request.",
            { code: "stream_truncated" },
          ),
        );
      }
    },
    async cancel(reason) {
      // The client went away: stop the upstream generation too. Ended first, so the read that
      // aborting breaks is not taken for a failure of the backend.
      end("cancelled");
      options.abortUpstream(
        reason ?? new DOMException("the client closed the stream", "AbortError"),
      );
      await options.reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
}

function asStreamError(err: unknown, backendId: string): Error {
  if (err instanceof ServiceError) return err;
  const detail = errorMessage(err);
  return new ServiceError(
    `The stream from backend '${backendId}' broke mid-way (${detail}); the answer is ` +
      "incomplete. Retry the request.",
    { code: "stream_broken", cause: err },
  );
}

// The last non-empty SSE event of the text seen so far.
function lastEvent(text: string): string {
  const events = text.split(/\r?\n\r?\n|\r\r/).map((e) => e.trim()).filter((e) => e !== "");
  return events.at(-1) ?? "";
}
