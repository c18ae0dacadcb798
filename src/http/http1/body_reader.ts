/**
 * The request body of one HTTP/1.1 request as a pull-based `ReadableStream`, framed by
 * `Content-Length` or `Transfer-Encoding: chunked`. It sends `100 Continue` on the first read
 * when the client waits for it, errors with a 400 on bad framing and with a `CancelledError` when
 * the client leaves mid-body, and can be drained after the response so the connection is reused.
 *
 * @module
 */
import { CancelledError, SvcException } from "../../core/errors.ts";
import { badRequest } from "./protocol_error.ts";
import type { SocketReader } from "./socket_reader.ts";

/** Options of {@link RequestBody}. */
export interface RequestBodyOptions {
  /** `Content-Length`, or null for a chunked body. */
  length: number | null;
  /** Largest chunk-size line and trailer section. */
  maxHeaderBytes: number;
  /** Sends `100 Continue`; given when the client waits for it before sending the body. */
  sendContinue?: () => Promise<void>;
  /** Called once when reading ends: without an error when the body was read to its end. */
  onEnd: (error?: SvcException) => void;
}

type ChunkState = "size" | "data" | "crlf" | "trailers" | "end";

const LF = 10;
const DIRECT_READ_BYTES = 64 * 1024;
const MAX_CHUNK_LINE = 1024;
// Control characters other than HTAB.
// deno-lint-ignore no-control-regex
const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;
const LATIN1 = new TextDecoder("latin1");

/** The body of one request. */
export class RequestBody {
  /** What the handler reads (`Request.body`). */
  readonly stream: ReadableStream<Uint8Array>;
  readonly #reader: SocketReader;
  readonly #options: RequestBodyOptions;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #sendContinue: (() => Promise<void>) | undefined;
  #remaining: number;
  #state: ChunkState = "size";
  #trailerBytes = 0;
  #ended = false;
  #error: SvcException | undefined;
  #busy = false;

  constructor(reader: SocketReader, options: RequestBodyOptions) {
    this.#reader = reader;
    this.#options = options;
    this.#remaining = options.length ?? 0;
    this.#sendContinue = options.sendContinue;
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => void (this.#controller = controller),
      pull: () => this.#pull(),
    }, { highWaterMark: 0 });
  }

  /** The body was read to its end (by the handler or a drain). */
  get complete(): boolean {
    return this.#ended && this.#error === undefined;
  }

  /** Reading failed (bad framing, timeout, client gone): the connection cannot be reused. */
  get failed(): boolean {
    return this.#error !== undefined;
  }

  /**
   * Whether the rest of the body can be drained after the response so the connection stays
   * open: a plain body with at most `maxBytes` left that did not fail.
   */
  drainable(maxBytes: number): boolean {
    if (this.complete) return true;
    return !this.failed && !this.awaitingContinue && this.#options.length !== null &&
      this.#remaining <= maxBytes;
  }

  /** The client waits for `100 Continue`, which was not sent: it may never send the body. */
  get awaitingContinue(): boolean {
    return this.#sendContinue !== undefined;
  }

  /** Ends the body with `err` (a timeout): the reader sees it, and so does `onEnd`. */
  fail(err: SvcException): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = err;
    try {
      this.#controller.error(err);
    } catch {
      // The handler cancelled the stream: nothing to tell it.
    }
    this.#options.onEnd(err);
  }

  /**
   * Reads and discards the rest of the body (up to `maxBytes`) after the response, so the
   * connection can carry the next request; false when that is not possible.
   */
  async drain(maxBytes: number): Promise<boolean> {
    if (this.#ended) return this.complete;
    if (this.#busy || this.awaitingContinue) return false;
    this.#busy = true;
    try {
      let total = 0;
      while (true) {
        const chunk = await this.#next();
        if (this.#ended) return false; // failed meanwhile (timeout)
        if (chunk === null) {
          this.#end();
          try {
            this.#controller.close();
          } catch {
            // Cancelled by the handler.
          }
          return true;
        }
        total += chunk.byteLength;
        if (total > maxBytes) return false;
      }
    } catch (err) {
      this.fail(asSvcError(err));
      return false;
    } finally {
      this.#busy = false;
    }
  }

  async #pull(): Promise<void> {
    if (this.#ended || this.#busy) return;
    this.#busy = true;
    try {
      const send = this.#sendContinue;
      if (send !== undefined) {
        this.#sendContinue = undefined;
        await send();
      }
      const chunk = await this.#next();
      if (this.#ended) return;
      if (chunk === null) {
        this.#end();
        this.#controller.close();
      } else {
        this.#controller.enqueue(chunk);
      }
    } catch (err) {
      this.fail(asSvcError(err));
    } finally {
      this.#busy = false;
    }
  }

  #end(): void {
    this.#ended = true;
    this.#options.onEnd();
  }

  // The next piece of the body, or null at its end.
  #next(): Promise<Uint8Array | null> {
    return this.#options.length === null ? this.#nextChunked() : this.#nextPlain();
  }

  async #nextPlain(): Promise<Uint8Array | null> {
    if (this.#remaining === 0) return null;
    const piece = await this.#readUpTo(this.#remaining);
    this.#remaining -= piece.byteLength;
    return piece;
  }

  async #nextChunked(): Promise<Uint8Array | null> {
    while (true) {
      switch (this.#state) {
        case "size": {
          const line = await this.#line(MAX_CHUNK_LINE, "chunk size line");
          const size = line.split(";")[0].trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(size)) {
            throw badRequest(
              `The chunk size '${size.slice(0, 20)}' is not a hexadecimal number.`,
              "invalid_chunk_size",
            );
          }
          this.#remaining = parseInt(size, 16);
          this.#state = this.#remaining === 0 ? "trailers" : "data";
          break;
        }
        case "data": {
          const piece = await this.#readUpTo(this.#remaining);
          this.#remaining -= piece.byteLength;
          if (this.#remaining === 0) this.#state = "crlf";
          return piece;
        }
        case "crlf":
          if (await this.#line(2, "chunk") !== "") {
            throw badRequest("A chunk is longer than its declared size.", "invalid_chunk");
          }
          this.#state = "size";
          break;
        case "trailers": {
          const line = await this.#line(this.#options.maxHeaderBytes, "trailer section");
          this.#trailerBytes += line.length;
          if (this.#trailerBytes > this.#options.maxHeaderBytes) {
            throw badRequest("The trailer section is too large.", "trailers_too_large", 431);
          }
          if (line === "") this.#state = "end";
          break;
        }
        case "end":
          return null;
      }
    }
  }

  // Up to `max` bytes (at least one), from the buffer or, for large bodies, straight off the socket.
  async #readUpTo(max: number): Promise<Uint8Array> {
    const reader = this.#reader;
    if (reader.available === 0) {
      if (max > reader.buf.length && !reader.reading) {
        const direct = await reader.readDirect(Math.min(max, DIRECT_READ_BYTES));
        if (direct === null) throw truncated();
        return direct;
      }
      if (!(await reader.fill())) throw truncated();
    }
    return reader.take(Math.min(reader.available, max));
  }

  // The next line (without its CRLF), at most `max` bytes long.
  async #line(max: number, what: string): Promise<string> {
    const reader = this.#reader;
    let scanned = reader.start;
    while (true) {
      const lf = reader.buf.subarray(0, reader.end).indexOf(LF, scanned);
      if (lf !== -1) {
        const line = LATIN1.decode(reader.buf.subarray(reader.start, lf));
        reader.skip(lf + 1 - reader.start);
        // Only CRLF ends a line here, and no control character (a bare CR or LF) hides in one:
        // parsers that differ on those frame a chunked body differently (request smuggling).
        if (!line.endsWith("\r") || CTL.test(line.slice(0, -1))) {
          throw badRequest(
            `The ${what} has a bare CR or LF or another control character.`,
            "invalid_chunk",
          );
        }
        return line.slice(0, -1);
      }
      if (reader.available > max) {
        throw badRequest(`The ${what} is longer than ${max} bytes.`, "invalid_chunk");
      }
      scanned = reader.end - reader.start; // offsets move when the buffer is compacted
      if (!(await reader.fill())) throw truncated();
      scanned += reader.start;
    }
  }
}

function truncated(): CancelledError {
  return new CancelledError("The client closed the connection before sending the whole body.");
}

function asSvcError(err: unknown): SvcException {
  return err instanceof SvcException ? err : new CancelledError(undefined, { cause: err });
}
