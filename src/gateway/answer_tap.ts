/**
 * Watches an answer as it passes to the client, parsing it once for every observer: a JSON answer
 * is read whole as bytes (answers of the serving API are bounded), decoded once for the parse,
 * given to each observer as one event and passed on as the same bytes (a body already known as
 * bytes is parsed from them, its stream left unread); an SSE stream is passed on chunk by chunk,
 * pulled at the client's pace, each `data:` event parsed and given to each observer; `end` is
 * called once when the answer is over (or the client went away). The token meter and the per-key
 * usage tap are its observers.
 *
 * @module
 */

import { bytesResponse, knownBody } from "../http/http1/known_body.ts";

const UTF8 = new TextDecoder();

/** What watches an answer. */
export interface AnswerObserver {
  /**
   * A JSON answer's body (`inStream` false), or one parsed SSE `data:` event (`inStream` true);
   * undefined when not JSON.
   */
  event(body: unknown, inStream: boolean): void;
  /** The answer is over. */
  end(): void;
}

/** `res` unchanged for the client, its events shown to `observers` as they pass. */
export async function tapAnswer(res: Response, observers: AnswerObserver[]): Promise<Response> {
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
  if (type.startsWith("text/event-stream")) return tapStream(res, event, end);
  if (!type.startsWith("application/json")) {
    end();
    return res;
  }
  const bytes = known ?? new Uint8Array(await res.arrayBuffer());
  event(parseJson(UTF8.decode(bytes)), false);
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
): Response {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    end();
  };
  const onLine = (line: string) => {
    if (line.startsWith("data:")) event(parseJson(line.slice(5).trim()), true);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) {
        onLine(pending);
        finish();
        controller.close();
        return;
      }
      const lines = (pending + decoder.decode(value, { stream: true })).split("\n");
      pending = lines.pop()!;
      for (const line of lines) onLine(line);
      controller.enqueue(value);
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

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
