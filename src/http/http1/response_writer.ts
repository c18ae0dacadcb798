/**
 * Writes a `Response` on an HTTP/1.1 connection: the head, then the body with `Content-Length`
 * when it is all at hand at once (head and body in one write), else chunked, one chunk per piece
 * the body yields (so each SSE event leaves at once). A body whose bytes are known (made with
 * `bytesResponse` of known_body.ts) is sent as is, its stream never read. Writes are awaited, so
 * a client that reads slowly slows the body's producer instead of filling memory.
 *
 * @module
 */
import { CancelledError } from "../../core/errors.ts";
import { knownBody } from "./known_body.ts";

/** Where the bytes go; it throws a `CancelledError` once the connection is gone. */
export interface ResponseSink {
  write(bytes: Uint8Array): Promise<void>;
}

/** Options of {@link writeResponse}. */
export interface WriteResponseOptions {
  /** The request was HEAD: no body is sent. */
  head?: boolean;
  /** Close the connection after this response (`Connection: close`). */
  close?: boolean;
  /** The client speaks HTTP/1.0: no chunked encoding (an unknown length ends at close). */
  http10?: boolean;
  /** Aborted when the connection is gone: the body is cancelled at once, not at its next write. */
  signal?: AbortSignal;
}

/** How the response went out. */
export interface WriteOutcome {
  /** The response is complete and framed, and the connection may carry another. */
  reusable: boolean;
  /** The body stream failed after the head was sent (the connection must close). */
  bodyError?: unknown;
}

const STATUS_TEXT: Record<number, string> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  499: "Client Closed Request",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};
// The framing headers are ours to set.
const OWN_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive"]);
// Bodies smaller than this that are all at hand get a Content-Length; larger ones are chunked.
const MAX_COLLECTED_BYTES = 256 * 1024;
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");
// What a stream may have produced while its previous write is still under way.
const MAX_WAITING_BYTES = 64 * 1024;
const NOT_YET = Promise.resolve(undefined);

let dateSecond = -1;
let dateHeader = "";

/**
 * Writes `res` to `sink`. Throws (after cancelling the body) when the sink fails; a body stream
 * that fails after the head went out is reported in the outcome (the connection must close).
 *
 * @example
 * ```ts
 * import { writeResponse } from "./response_writer.ts";
 * const parts: Uint8Array[] = [];
 * await writeResponse({ write: async (b) => void parts.push(b) }, new Response("hi"));
 * ```
 */
export async function writeResponse(
  sink: ResponseSink,
  res: Response,
  options: WriteResponseOptions = {},
): Promise<WriteOutcome> {
  let close = options.close ?? false;
  const connection = res.headers.get("connection");
  if (connection !== null && /\bclose\b/i.test(connection)) close = true;
  const status = res.status;
  const bodiless = options.head === true || status === 204 || status === 304 || status < 200;
  const known = bodiless ? undefined : knownBody(res);
  if (known !== undefined) {
    // All at hand: one write of head and body, whatever the size (it is in memory already).
    const head = encodeHead(res, framing(String(known.byteLength), close, options));
    await sink.write(withBody(head, [known]));
    return { reusable: !close };
  }
  if (res.body === null || bodiless) {
    res.body?.cancel().catch(() => {});
    const length = bodiless ? (options.head ? res.headers.get("content-length") : null) : "0";
    await sink.write(withBody(encodeHead(res, framing(length, close, options)), []));
    return { reusable: !close };
  }

  const reader = res.body.getReader();
  const signal = options.signal;
  const cancel = () => void reader.cancel(signal?.reason).catch(() => {});
  if (signal?.aborted) cancel();
  signal?.addEventListener("abort", cancel, { once: true });
  let headSent = false;
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    // Server-sent events go out as they come (the head with the first); other bodies are
    // collected while their pieces are at hand, so a whole body gets a Content-Length.
    const streaming = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
    let next = await reader.read();
    while (!next.done) {
      if (next.value.byteLength > 0) chunks.push(next.value);
      size += next.value.byteLength;
      if (streaming) break;
      const read = reader.read();
      // A read that settles at once (before an already-settled promise) had its data at hand.
      const settled = size > MAX_COLLECTED_BYTES ? undefined : await Promise.race([read, NOT_YET]);
      if (settled === undefined) {
        pending = read;
        break;
      }
      next = settled;
    }
    if (next.done) {
      headSent = true;
      await sink.write(withBody(encodeHead(res, framing(String(size), close, options)), chunks));
      return { reusable: !close };
    }
    const chunked = !options.http10;
    if (!chunked) close = true; // HTTP/1.0: the body ends when the connection does
    const lines = (chunked ? "transfer-encoding: chunked\r\n" : "") +
      connectionLine(close, options);
    headSent = true;
    const out = new BatchedWriter(sink);
    await out.push(withBody(encodeHead(res, lines), chunked ? chunks.map(frame) : chunks));
    while (true) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await (pending ?? reader.read());
      } catch (err) {
        // The body failed mid-way: the client gets a truncated (unterminated) body.
        await out.flush().catch(() => {});
        return { reusable: false, bodyError: err };
      }
      pending = undefined;
      if (next.done) break;
      // An empty chunk would read as the last one.
      if (next.value.byteLength > 0) await out.push(chunked ? frame(next.value) : next.value);
    }
    if (chunked) await out.push(LAST_CHUNK);
    await out.flush();
    return { reusable: !close };
  } catch (err) {
    if (err instanceof CancelledError) {
      // The sink failed: the client is gone; stop the producer.
      reader.cancel(err).catch(() => {});
      throw err;
    }
    if (headSent) return { reusable: false, bodyError: err };
    throw err; // the body failed before anything was sent: the caller answers with an error
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}

/**
 * Writes pieces as they come, one write at a time; pieces that arrive while a write is under way
 * go out together in the next one (fewer writes for fast streams, each event still sent at once
 * when the socket is free). At most {@link MAX_WAITING_BYTES} wait: then `push` waits too.
 */
class BatchedWriter {
  readonly #sink: ResponseSink;
  #pieces: Uint8Array[] = [];
  #bytes = 0;
  #writing: Promise<void> | undefined;
  #failed = false;
  #error: unknown;

  constructor(sink: ResponseSink) {
    this.#sink = sink;
  }

  async push(piece: Uint8Array): Promise<void> {
    if (this.#failed) throw this.#error;
    this.#pieces.push(piece);
    this.#bytes += piece.byteLength;
    this.#writing ??= this.#drain();
    if (this.#bytes > MAX_WAITING_BYTES) await this.flush();
  }

  /** Waits until everything pushed is written; throws the sink's error. */
  async flush(): Promise<void> {
    await this.#writing;
    if (this.#failed) throw this.#error;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pieces.length > 0) {
        const pieces = this.#pieces;
        this.#pieces = [];
        this.#bytes = 0;
        await this.#sink.write(pieces.length === 1 ? pieces[0] : withBody("", pieces));
      }
    } catch (err) {
      this.#failed = true;
      this.#error = err;
    } finally {
      this.#writing = undefined;
    }
  }
}

/** The bytes of a `100 Continue` interim response. */
export const CONTINUE_BYTES: Uint8Array = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

function framing(length: string | null, close: boolean, options: WriteResponseOptions): string {
  return (length === null ? "" : `content-length: ${length}\r\n`) +
    connectionLine(close, options);
}

function connectionLine(close: boolean, options: WriteResponseOptions): string {
  if (close) return "connection: close\r\n";
  return options.http10 ? "connection: keep-alive\r\n" : "";
}

// The head as bytes: status line, the response's headers, date, framing, blank line.
function encodeHead(res: Response, framingLines: string): string {
  let head = `HTTP/1.1 ${res.status} ${res.statusText || STATUS_TEXT[res.status] || ""}\r\n`;
  // forEach, not for-of: the same pairs (sorted, combined), without an iterator's several µs.
  res.headers.forEach((value, name) => {
    if (!OWN_HEADERS.has(name)) head += `${name}: ${value}\r\n`;
  });
  return head + `date: ${httpDate()}\r\n` + framingLines + "\r\n";
}

// One buffer for the head and the body pieces, so small answers are one write (one packet).
function withBody(head: string, pieces: Uint8Array[]): Uint8Array {
  let size = head.length;
  for (const p of pieces) size += p.byteLength;
  const out = new Uint8Array(size);
  // Header values are ByteStrings: one byte per char.
  for (let i = 0; i < head.length; i++) out[i] = head.charCodeAt(i);
  let offset = head.length;
  for (const p of pieces) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

function frame(chunk: Uint8Array): Uint8Array {
  const size = chunk.byteLength.toString(16);
  const out = new Uint8Array(size.length + chunk.byteLength + 4);
  for (let i = 0; i < size.length; i++) out[i] = size.charCodeAt(i);
  out[size.length] = 13;
  out[size.length + 1] = 10;
  out.set(chunk, size.length + 2);
  out[out.length - 2] = 13;
  out[out.length - 1] = 10;
  return out;
}

function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateHeader = new Date(now).toUTCString();
  }
  return dateHeader;
}
