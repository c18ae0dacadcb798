/**
 * A buffered reader over one socket: the bytes read and not yet consumed live in `buf[start,
 * end)`. One read is outstanding at most, so a read left pending to notice the client leaving
 * (while a handler runs) is simply the next read of the connection.
 *
 * @module
 */

const INITIAL_BYTES = 4096;

/** Buffered reads of a connection. */
export class SocketReader {
  /** The buffer; bytes `start` to `end` are read and not consumed. */
  buf: Uint8Array<ArrayBuffer>;
  start = 0;
  end = 0;
  /** The client closed its side (or the socket failed). */
  eof = false;
  readonly #conn: Deno.Conn;
  #pending: Promise<boolean> | undefined;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
    this.buf = new Uint8Array(INITIAL_BYTES);
  }

  /** Bytes read and not yet consumed. */
  get available(): number {
    return this.end - this.start;
  }

  /** A read is outstanding. */
  get reading(): boolean {
    return this.#pending !== undefined;
  }

  /**
   * Reads more bytes after `end` (making room first); false at end of stream. Calls while a read
   * is outstanding share it.
   */
  fill(): Promise<boolean> {
    if (this.eof) return Promise.resolve(false);
    return this.#pending ??= this.#read();
  }

  /** Consumes and returns a copy of the next `n` bytes (`n <= available`). */
  take(n: number): Uint8Array<ArrayBuffer> {
    const out = this.buf.slice(this.start, this.start + n);
    this.skip(n);
    return out;
  }

  /** Consumes `n` bytes. */
  skip(n: number): void {
    this.start += n;
    if (this.start === this.end) this.start = this.end = 0;
  }

  /**
   * Reads up to `max` bytes straight into a new array, bypassing the buffer (for large bodies);
   * null at end of stream. Only when nothing is buffered and no read is outstanding.
   */
  async readDirect(max: number): Promise<Uint8Array | null> {
    if (this.eof) return null;
    const target = new Uint8Array(max);
    let n: number | null;
    try {
      n = await this.#conn.read(target);
    } catch {
      n = null; // a reset or our own close: the same as the end for us
    }
    if (n === null) {
      this.eof = true;
      return null;
    }
    return target.subarray(0, n);
  }

  async #read(): Promise<boolean> {
    try {
      this.#makeRoom();
      let n: number | null;
      try {
        n = await this.#conn.read(this.buf.subarray(this.end));
      } catch {
        n = null;
      }
      if (n === null) {
        this.eof = true;
        return false;
      }
      this.end += n;
      return true;
    } finally {
      this.#pending = undefined;
    }
  }

  #makeRoom(): void {
    if (this.end < this.buf.length) return;
    if (this.start > 0) {
      this.buf.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
      return;
    }
    // Full of one unfinished item (a head the caller bounds): grow.
    const bigger = new Uint8Array(this.buf.length * 2);
    bigger.set(this.buf.subarray(0, this.end));
    this.buf = bigger;
  }
}
