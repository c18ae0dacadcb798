/**
 * Watches an answer as it passes to the client, parsing it once for every observer: a JSON answer
 * is read whole as bytes (answers of the serving API are bounded), only its top-level `usage`
 * parsed (see _answer_usage.ts), given to each observer as one event and passed on as the same
 * bytes (a body already known as bytes is read from them, its stream left unread); an SSE stream
 * is passed on chunk by chunk, pulled at the client's pace, each `data:` event parsed and given to
 * each observer; `end` is called once when the answer is over (or the client went away). The token
 * meter and the per-key usage tap are its observers.
 *
 * @module
 */

import { bytesResponse, knownBody } from "../http/http1/known_body.ts";
import { answerUsage } from "./_answer_usage.ts";

/** What watches an answer. */
export interface AnswerObserver {
  /**
   * A JSON answer's top-level usage as `{ usage }` (`inStream` false: the rest of the answer,
   * megabytes at times, is not parsed), or one parsed SSE `data:` event (`inStream` true);
   * undefined when there is no usage or the event is not JSON.
   */
  event(body: unknown, inStream: boolean): void;
  /** The answer is over. */
  end(): void;
}

/**
 * `res` unchanged for the client, its events shown to `observers` as they pass. With
 * `hideUsage`, a stream's usage (which the gateway asked for, not the client) is shown to the
 * observers but taken out of what the client gets: the `usage` of each chunk, and the last chunk
 * that carries only usage.
 */
export async function tapAnswer(
  res: Response,
  observers: AnswerObserver[],
  options: { hideUsage?: boolean } = {},
): Promise<Response> {
  const type = res.headers.get("content-type") ?? "";
  const event = (body: unknown, inStream: boolean) =>
    observers.forEach((o) => o.event(body, inStream));
  const end = () => observers.forEach((o) => o.end());
  // Known bytes first: asking for `res.body` would make a stream nobody reads.
  const known = knownBody(res);
  if ((known === undefined && res.body === null) || observers.length === 0) {
    end();
    return res;
  }
  if (type.startsWith("text/event-stream")) {
    return tapStream(res, event, end, options.hideUsage ?? false);
  }
  if (!type.startsWith("application/json")) {
    end();
    return res;
  }
  const bytes = known ?? new Uint8Array(await res.arrayBuffer());
  const usage = await answerUsage(bytes);
  event(usage === undefined ? undefined : { usage }, false);
  end();
  if (known !== undefined) return res;
  return bytesResponse(bytes, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

function tapStream(
  res: Response,
  event: (body: unknown, inStream: boolean) => void,
  end: () => void,
  hideUsage: boolean,
): Response {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    end();
  };
  // The line as the client gets it (null: left out).
  const onLine = (line: string): string | null => {
    if (!line.startsWith("data:")) return line;
    const body = parseJson(line.slice(5).trim());
    event(body, true);
    return hideUsage ? withoutUsage(line, body) : line;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Each pull passes something on (or ends): a pull that enqueues nothing is not repeated.
      for (;;) {
        // An upstream that fails ends the answer too: what was seen of it still counts.
        const { value, done } = await reader.read().catch((err) => {
          finish();
          throw err;
        });
        if (done) {
          const last = onLine(pending);
          finish();
          if (hideUsage && last) controller.enqueue(encoder.encode(last));
          controller.close();
          return;
        }
        const lines = (pending + decoder.decode(value, { stream: true })).split("\n");
        pending = lines.pop()!;
        const out = lines.map(onLine);
        if (!hideUsage) return controller.enqueue(value);
        const text = out.filter((l) => l !== null).map((l) => `${l}\n`).join("");
        if (text !== "") return controller.enqueue(encoder.encode(text));
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

// A `data:` line without the usage the client did not ask for: null for a chunk that carries
// only usage, the line rewritten without its `usage` field otherwise.
function withoutUsage(line: string, body: unknown): string | null {
  if (typeof body !== "object" || body === null || !("usage" in body)) return line;
  const { usage, ...rest } = body as Record<string, unknown>;
  const choices = rest.choices;
  if (usage !== null && Array.isArray(choices) && choices.length === 0) return null;
  return `data: ${JSON.stringify(rest)}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
