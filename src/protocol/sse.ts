/**
 * Server-sent events as OpenAI uses them: `data: <json>\n\n` per event, `data: [DONE]` at the end.
 *
 * @module
 */

/** The last event of an OpenAI stream. */
export const SSE_DONE = "data: [DONE]\n\n";

/**
 * Encodes one SSE `data:` event carrying JSON (JSON never contains a raw newline, so one line),
 * with an `event:` name line when `event` is given (the Responses API names its events).
 *
 * @example
 * ```ts
 * import { encodeSseData } from "./sse.ts";
 * encodeSseData({ a: 1 }); // 'data: {"a":1}\n\n'
 * encodeSseData({ a: 1 }, "x"); // 'event: x\ndata: {"a":1}\n\n'
 * ```
 */
export function encodeSseData(data: unknown, event?: string): string {
  const name = event === undefined ? "" : `event: ${event.replace(/[\r\n]/g, "")}\n`;
  return `${name}data: ${JSON.stringify(data)}\n\n`;
}

/**
 * Reads the `data` payloads of an SSE byte stream, one string per event (multi-line data joined
 * with "\n"; comments and other fields skipped). Used to relay and to test streams.
 *
 * @example
 * ```ts
 * import { readSseData } from "./sse.ts";
 * const body = new Response("data: 1\n\ndata: [DONE]\n\n").body!;
 * for await (const data of readSseData(body)) console.log(data); // "1", then "[DONE]"
 * ```
 */
export async function* readSseData(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  const reader = stream.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A "\r" ending the buffer may be half of a "\r\n" split across chunks: wait for more.
        if (!done && newline === buffer.length - 1 && buffer[newline] === "\r") break;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) {
          data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        }
      }
      if (done) break;
    }
    if (buffer.startsWith("data:")) data.push(buffer.slice(buffer.startsWith("data: ") ? 6 : 5));
    if (data.length > 0) yield data.join("\n");
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
