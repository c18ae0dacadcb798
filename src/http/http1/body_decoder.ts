/**
 * The framing of one HTTP/1.1 message body read off a socket: `Content-Length`, `Transfer-Encoding:
 * chunked`, or (responses only) everything until the peer closes. Shared by the server's request
 * bodies and the client's response bodies; each side says which errors it raises.
 *
 * @module
 */
import type { SocketReader } from "./socket_reader.ts";

/** How a body ends. */
export type BodyFraming =
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  /** Until the peer closes the connection (a response without length or chunking). */
  | { kind: "close" };

/** The errors a decoder raises, made by its side (a 400 for a server, a broken answer for a client). */
export interface BodyErrors {
  /** The framing is malformed: `status` is the HTTP status a server would answer. */
  malformed(message: string, code: string, status?: number): Error;
  /** The connection ended before the body did. */
  truncated(): Error;
}

type ChunkState = "size" | "data" | "crlf" | "trailers" | "end";

const LF = 10;
const DIRECT_READ_BYTES = 64 * 1024;
const MAX_CHUNK_LINE = 1024;
// Control characters other than HTAB.
// deno-lint-ignore no-control-regex
const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;
const LATIN1 = new TextDecoder("latin1");

/** Reads the pieces of one body in order. */
export class BodyDecoder {
  readonly framing: BodyFraming;
  readonly #reader: SocketReader;
  readonly #maxHeaderBytes: number;
  readonly #errors: BodyErrors;
  #remaining: number;
  #state: ChunkState = "size";
  #trailerBytes = 0;

  constructor(
    reader: SocketReader,
    framing: BodyFraming,
    options: { maxHeaderBytes: number; errors: BodyErrors },
  ) {
    this.#reader = reader;
    this.framing = framing;
    this.#maxHeaderBytes = options.maxHeaderBytes;
    this.#errors = options.errors;
    this.#remaining = framing.kind === "length" ? framing.length : 0;
  }

  /** Bytes of a `length` body not read yet. */
  get remaining(): number {
    return this.#remaining;
  }

  /** The next piece of the body (at least one byte), or null at its end. */
  next(): Promise<Uint8Array | null> {
    switch (this.framing.kind) {
      case "length":
        return this.#nextPlain();
      case "chunked":
        return this.#nextChunked();
      case "close":
        return this.#nextUntilClose();
    }
  }

  async #nextPlain(): Promise<Uint8Array | null> {
    if (this.#remaining === 0) return null;
    const piece = await this.#readUpTo(this.#remaining);
    this.#remaining -= piece.byteLength;
    return piece;
  }

  async #nextUntilClose(): Promise<Uint8Array | null> {
    const reader = this.#reader;
    if (reader.available === 0 && !(await reader.fill())) return null;
    return reader.take(reader.available);
  }

  async #nextChunked(): Promise<Uint8Array | null> {
    while (true) {
      switch (this.#state) {
        case "size": {
          const line = await this.#line(MAX_CHUNK_LINE, "chunk size line");
          const size = line.split(";")[0].trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(size)) {
            throw this.#errors.malformed(
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
            throw this.#errors.malformed(
              "A chunk is longer than its declared size.",
              "invalid_chunk",
            );
          }
          this.#state = "size";
          break;
        case "trailers": {
          const line = await this.#line(this.#maxHeaderBytes, "trailer section");
          this.#trailerBytes += line.length;
          if (this.#trailerBytes > this.#maxHeaderBytes) {
            throw this.#errors.malformed(
              "The trailer section is too large.",
              "trailers_too_large",
              431,
            );
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
        if (direct === null) throw this.#errors.truncated();
        return direct;
      }
      if (!(await reader.fill())) throw this.#errors.truncated();
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
          throw this.#errors.malformed(
            `The ${what} has a bare CR or LF or another control character.`,
            "invalid_chunk",
          );
        }
        return line.slice(0, -1);
      }
      if (reader.available > max) {
        throw this.#errors.malformed(`The ${what} is longer than ${max} bytes.`, "invalid_chunk");
      }
      scanned = reader.end - reader.start; // offsets move when the buffer is compacted
      if (!(await reader.fill())) throw this.#errors.truncated();
      scanned += reader.start;
    }
  }
}
