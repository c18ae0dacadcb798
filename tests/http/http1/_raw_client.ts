// A client on a plain TCP socket, for the tests that need bytes a fetch never sends (partial
// heads, bad framing, pipelining) or a client that behaves badly (stops reading, leaves early).
const encoder = new TextEncoder();

/** A raw connection whose answers are read in the background into `text`. */
export class RawClient {
  readonly conn: Deno.TcpConn;
  /** Everything received so far. */
  text = "";
  /** The server closed the connection (or reset it). */
  closed = false;
  readonly #pump: Promise<void>;

  private constructor(conn: Deno.TcpConn, read: boolean) {
    this.conn = conn;
    this.#pump = read ? this.#read() : Promise.resolve();
  }

  /** Connects to `url`'s host and port; `read: false` leaves the socket unread (a stalled client). */
  static async open(url: string, options: { read?: boolean } = {}): Promise<RawClient> {
    const u = new URL(url);
    const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
    return new RawClient(conn, options.read ?? true);
  }

  async send(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    let offset = 0;
    while (offset < bytes.length) offset += await this.conn.write(bytes.subarray(offset));
  }

  /** Waits until `condition` holds on what was received; false after `timeoutMs`. */
  async until(condition: (c: RawClient) => boolean, timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!condition(this)) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
    return true;
  }

  /** Waits until the server closes the connection; false after `timeoutMs`. */
  untilClosed(timeoutMs = 10_000): Promise<boolean> {
    return this.until((c) => c.closed, timeoutMs);
  }

  async close(): Promise<void> {
    try {
      this.conn.close();
    } catch {
      // Closed already.
    }
    await this.#pump;
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    const buf = new Uint8Array(16 * 1024);
    try {
      while (true) {
        const n = await this.conn.read(buf);
        if (n === null) break;
        this.text += decoder.decode(buf.subarray(0, n), { stream: true });
      }
    } catch {
      // A reset, or our own close.
    }
    this.closed = true;
  }
}

/** The JSON body of the first response in `text` (a Content-Length response). */
export function firstJsonBody(text: string): { error: Record<string, unknown> } {
  const start = text.indexOf("\r\n\r\n") + 4;
  const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
  return JSON.parse(text.slice(start, start + length));
}
