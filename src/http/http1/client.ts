/**
 * An HTTP/1.1 client for `http://` servers on kept-alive sockets: what the gateway uses to reach
 * its engines instead of `fetch`, whose `Request`/`Response` machinery and connection pool cost
 * more CPU than the rest of a short request's trip through the gateway.
 *
 * It does what a proxy to a known server needs and no more: one request per socket at a time (no
 * pipelining), bodies framed by `Content-Length`, chunked or the server's close, no redirects
 * followed, no compression asked for, no cookies, no proxies. The answer is an ordinary
 * `Response`; a small body that arrived with its head is already in memory (see known_body.ts),
 * a longer one (a stream of events) is read off the socket as the reader pulls. The request's
 * `signal` aborts the exchange at any point, body included, and closes the socket.
 *
 * A kept-alive socket the server closed while it sat idle is noticed (each idle socket has a
 * read pending) and dropped; if the server closes one just as a request goes out on it (nothing
 * of an answer received), the request is sent once more on a new socket.
 *
 * @module
 */
import { bytesResponse } from "./known_body.ts";
import { BodyDecoder, type BodyErrors } from "./body_decoder.ts";
import { findHeadEnd } from "./request_head.ts";
import {
  MalformedResponseError,
  parseResponseHead,
  responseFraming,
  type ResponseHead,
} from "./response_head.ts";
import { SocketReader } from "./socket_reader.ts";

/** Options of {@link Http1Client}. */
export interface Http1ClientOptions {
  /** Most idle sockets kept per server (default 256); more are closed when released. */
  maxIdlePerOrigin?: number;
  /** How long an idle socket is kept (default 4000 ms: below the usual 5 s of servers). */
  idleTimeoutMs?: number;
  /** Largest response head in bytes (default 64 KiB). */
  maxHeadBytes?: number;
}

/** One request. */
export interface Http1Request {
  method: string;
  /** Lower-case or not; `host` and `content-length` are set by the client. */
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** Where a request goes. */
interface Target {
  /** `host:port` as in the URL (the Host header, and the pool's key). */
  host: string;
  hostname: string;
  port: number;
  /** Path and query. */
  path: string;
}

const MAX_TARGETS = 1024;
const ENCODER = new TextEncoder();
// A header value may not end a line early or smuggle a second header.
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00\r\n]/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const RESPONSE_BODY_ERRORS: BodyErrors = {
  malformed: (message) => new MalformedResponseError(message),
  truncated: () => new TypeError("the server closed the connection before the whole answer"),
};

/**
 * A pool of kept-alive sockets per server and the requests sent over them.
 *
 * @example
 * ```ts
 * import { Http1Client } from "./client.ts";
 * const client = new Http1Client();
 * // const res = await client.request("http://127.0.0.1:8001/health", { method: "GET" });
 * client.close();
 * ```
 */
export class Http1Client {
  readonly #idle = new Map<string, Socket[]>();
  readonly #targets = new Map<string, Target>();
  readonly #maxIdle: number;
  readonly #idleTimeoutMs: number;
  readonly #maxHeadBytes: number;
  #closed = false;

  constructor(options: Http1ClientOptions = {}) {
    this.#maxIdle = options.maxIdlePerOrigin ?? 256;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 4000;
    this.#maxHeadBytes = options.maxHeadBytes ?? 64 * 1024;
  }

  /** Idle sockets held, all servers together. */
  get idleSockets(): number {
    let n = 0;
    for (const list of this.#idle.values()) n += list.length;
    return n;
  }

  /**
   * Sends one request to an `http://` URL; resolves with the answer once its head has arrived,
   * like `fetch`, and rejects with the signal's reason when aborted.
   */
  async request(url: string, init: Http1Request): Promise<Response> {
    const target = this.#target(url);
    const signal = init.signal;
    signal?.throwIfAborted();
    if (this.#closed) throw new TypeError("the HTTP client is closed");
    const payload = requestBytes(target, init);
    const origin = target.host;
    // A reused socket may have been closed by the server just now: then once more on a new one.
    for (let attempt = 0;; attempt++) {
      const socket = this.#takeIdle(origin) ??
        await Socket.open(origin, target.hostname, target.port, signal);
      // Closes the socket (a pending read then ends) and errors a body being read.
      const exchange: Exchange = {
        socket,
        signal,
        abortBody: undefined,
        onAbort: () => {
          socket.close();
          exchange.abortBody?.(signal!.reason);
        },
      };
      signal?.addEventListener("abort", exchange.onAbort, { once: true });
      let head: ResponseHead;
      try {
        await socket.write(payload);
        head = await this.#readHead(socket);
      } catch (err) {
        signal?.removeEventListener("abort", exchange.onAbort);
        socket.close();
        if (signal?.aborted) throw signal.reason;
        if (socket.reused && !socket.answered && attempt === 0) continue;
        throw err;
      }
      try {
        return this.#response(exchange, head, init.method);
      } catch (err) {
        signal?.removeEventListener("abort", exchange.onAbort);
        socket.close();
        throw err;
      }
    }
  }

  // A gateway sends to a handful of URLs: each is parsed once.
  #target(url: string): Target {
    let target = this.#targets.get(url);
    if (target !== undefined) return target;
    const parsed = new URL(url);
    if (parsed.protocol !== "http:") {
      throw new TypeError(`the HTTP/1.1 client speaks plain http://, not ${parsed.protocol}`);
    }
    target = {
      host: parsed.host,
      // `[::1]` in a URL, `::1` for a socket.
      hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: parsed.port === "" ? 80 : Number(parsed.port),
      path: `${parsed.pathname}${parsed.search}`,
    };
    if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
    this.#targets.set(url, target);
    return target;
  }

  /** Closes the idle sockets; those in use close when their answer ends. No request after. */
  close(): void {
    this.#closed = true;
    for (const list of this.#idle.values()) for (const socket of list) socket.close();
    this.#idle.clear();
  }

  // The next head that is not an interim (1xx) answer.
  async #readHead(socket: Socket): Promise<ResponseHead> {
    const reader = socket.reader;
    while (true) {
      let scanned = 0;
      while (true) {
        const end = findHeadEnd(reader.buf, reader.start + scanned, reader.end);
        if (end !== -1) {
          const head = parseResponseHead(reader.buf.subarray(reader.start, end));
          reader.skip(end - reader.start);
          if (head.status >= 200) return head;
          break; // 100 Continue, 103 Early Hints: the real answer follows
        }
        if (reader.available > this.#maxHeadBytes) {
          throw new MalformedResponseError(
            `the answer's head is longer than ${this.#maxHeadBytes} bytes`,
          );
        }
        // Rescan from a little before the old end: the blank line may straddle two reads.
        scanned = Math.max(0, reader.available - 3);
        if (!(await reader.fill())) {
          throw new TypeError("the server closed the connection before answering");
        }
        socket.answered = true;
      }
    }
  }

  #response(exchange: Exchange, head: ResponseHead, method: string): Response {
    const { socket, signal } = exchange;
    const framing = responseFraming(head, method);
    const reusable = head.keepAlive && framing?.kind !== "close" &&
      !(head.transferEncoding !== null && head.contentLength !== null);
    const init = { status: head.status, statusText: head.statusText, headers: head.headers };
    let finished = false;
    const finish = (ok: boolean) => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener("abort", exchange.onAbort);
      if (ok && reusable) this.#release(socket);
      else socket.close();
    };
    if (framing === null) {
      const res = new Response(null, init);
      finish(true);
      return res;
    }
    const reader = socket.reader;
    if (framing.kind === "length" && reader.available >= framing.length) {
      // The whole body came with the head (a short JSON answer): no stream to make or read.
      const res = bytesResponse(reader.take(framing.length), init);
      finish(true);
      return res;
    }
    const decoder = new BodyDecoder(reader, framing, {
      maxHeaderBytes: this.#maxHeadBytes,
      errors: RESPONSE_BODY_ERRORS,
    });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        // An abort while the body is read errors it, as fetch's does.
        exchange.abortBody = (reason) => {
          finished = true;
          try {
            controller.error(reason);
          } catch {
            // Already closed.
          }
        };
      },
      async pull(controller) {
        let piece: Uint8Array | null;
        try {
          piece = await decoder.next();
        } catch (err) {
          if (finished) return; // aborted: the stream has its error already
          finish(false);
          controller.error(err);
          return;
        }
        if (finished) return;
        if (piece === null) {
          finish(true);
          controller.close();
        } else {
          controller.enqueue(piece);
        }
      },
      cancel() {
        finish(false);
      },
    }, { highWaterMark: 0 });
    return new Response(body, init);
  }

  #takeIdle(origin: string): Socket | undefined {
    const list = this.#idle.get(origin);
    while (list !== undefined && list.length > 0) {
      const socket = list.pop()!;
      socket.leaveIdle();
      // Closed by the server (or it sent something unasked): not usable.
      if (socket.reader.eof || socket.reader.available > 0 || socket.closed) {
        socket.close();
        continue;
      }
      return socket;
    }
    return undefined;
  }

  #release(socket: Socket): void {
    const list = this.#idle.get(socket.origin) ?? [];
    if (this.#closed || socket.closed || list.length >= this.#maxIdle) {
      socket.close();
      return;
    }
    list.push(socket);
    this.#idle.set(socket.origin, list);
    socket.enterIdle(this.#idleTimeoutMs, () => {
      const i = list.indexOf(socket);
      if (i !== -1) list.splice(i, 1);
      socket.close();
    });
  }
}

/** One request's socket and abort handling. */
interface Exchange {
  socket: Socket;
  signal: AbortSignal | undefined;
  /** Listens on the signal until the answer is read whole (or fails). */
  onAbort: () => void;
  /** Set once a body stream exists: errors it with the abort's reason. */
  abortBody: ((reason: unknown) => void) | undefined;
}

/** One socket to one server, and the state of its current exchange. */
class Socket {
  readonly origin: string;
  readonly reader: SocketReader;
  /** It carried an earlier exchange. */
  reused = false;
  /** Bytes of an answer arrived in the current exchange. */
  answered = false;
  closed = false;
  readonly #conn: Deno.TcpConn;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #idleToken = 0;

  private constructor(origin: string, conn: Deno.TcpConn) {
    this.origin = origin;
    this.#conn = conn;
    this.reader = new SocketReader(conn);
  }

  /** Connects; an abort while connecting rejects at once and closes the socket when it opens. */
  static async open(
    origin: string,
    hostname: string,
    port: number,
    signal: AbortSignal | undefined,
  ): Promise<Socket> {
    const connecting = Deno.connect({ hostname, port });
    const conn = signal === undefined ? await connecting : await abortable(connecting, signal);
    conn.setNoDelay(true);
    return new Socket(origin, conn);
  }

  async write(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) offset += await this.#conn.write(bytes.subarray(offset));
  }

  /**
   * Waits idle: a read stays pending, so a close by the server (or anything it sends unasked)
   * drops the socket at once; so does `timeoutMs` without use. Neither keeps the process alive.
   */
  enterIdle(timeoutMs: number, drop: () => void): void {
    const token = ++this.#idleToken;
    this.#conn.unref();
    this.reader.fill().then(() => {
      if (this.#idleToken === token) drop();
    });
    const timer = setTimeout(drop, timeoutMs);
    Deno.unrefTimer(timer);
    this.#idleTimer = timer;
  }

  /** Taken for a new exchange: the pending read of the idle time becomes its first read. */
  leaveIdle(): void {
    this.#idleToken++;
    clearTimeout(this.#idleTimer);
    this.#conn.ref();
    this.reused = true;
    this.answered = false;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#idleToken++;
    clearTimeout(this.#idleTimer);
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }
}

// The request line, headers and body, in one buffer: one write.
function requestBytes(target: Target, init: Http1Request): Uint8Array {
  const body = init.body === undefined
    ? undefined
    : typeof init.body === "string"
    ? ENCODER.encode(init.body)
    : init.body;
  let head = `${init.method} ${target.path} HTTP/1.1\r\nhost: ${target.host}\r\n`;
  for (const name in init.headers) {
    const value = init.headers[name];
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length") continue;
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) {
      throw new TypeError(`the header '${name.slice(0, 50)}' is not a valid HTTP header`);
    }
    head += `${name}: ${value}\r\n`;
  }
  if (body !== undefined || init.method === "POST" || init.method === "PUT") {
    head += `content-length: ${body?.byteLength ?? 0}\r\n`;
  }
  head += "\r\n";
  const headBytes = ENCODER.encode(head);
  if (body === undefined || body.byteLength === 0) return headBytes;
  const out = new Uint8Array(headBytes.byteLength + body.byteLength);
  out.set(headBytes);
  out.set(body, headBytes.byteLength);
  return out;
}

// `promise`, or the signal's reason once it aborts; a connection that opens after that is closed.
function abortable(promise: Promise<Deno.TcpConn>, signal: AbortSignal): Promise<Deno.TcpConn> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (conn) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) conn.close();
        else resolve(conn);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
