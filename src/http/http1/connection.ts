/**
 * One HTTP/1.1 connection: the keep-alive loop (read a head, call the handler, write the
 * response, repeat), with the deadlines of {@link HttpLimits} checked by the server's sweep.
 * While a handler runs, one read stays pending on the socket so a client that leaves aborts the
 * request's signal. Nothing thrown here escapes: every failure ends in an answer or a close.
 *
 * @module
 */
import { CancelledError, SvcException } from "../../core/errors.ts";
import type { HttpLogger } from "../logger.ts";
import { RequestBody } from "./body_reader.ts";
import type { HttpLimits } from "./limits.ts";
import { badRequest, protocolErrorResponse, requestTimeout } from "./protocol_error.ts";
import { findHeadEnd, parseRequestHead, type RequestHead, requestUrl } from "./request_head.ts";
import {
  CONTINUE_BYTES,
  type ResponseSink,
  type WriteOutcome,
  writeResponse,
} from "./response_writer.ts";
import { SocketReader } from "./socket_reader.ts";

/** What a handler learns about its request besides the `Request`. */
export interface Http1RequestInfo {
  remoteAddr: Deno.NetAddr;
  /** Resolves once the response was written (or the connection failed); never rejects. */
  completed: Promise<void>;
  /** Aborted when the client goes away (or the server aborts in-flight requests). */
  signal: AbortSignal;
}

/** A request handler. */
export type Http1Handler = (req: Request, info: Http1RequestInfo) => Promise<Response>;

/** What a connection needs from its server. */
export interface ConnectionContext {
  readonly handler: Http1Handler;
  readonly limits: HttpLimits;
  readonly logger: HttpLogger;
  /** The answer when the handler throws (it should not). */
  readonly onError: (err: unknown) => Response;
  /** The server is shutting down: finish the current response, then close. */
  readonly stopping: boolean;
}

const LF = 10;
const CR = 13;
// The most of an unread request body drained after the response to keep the connection.
const DRAIN_LIMIT_BYTES = 256 * 1024;
// How long a connection closing after an error keeps discarding what the client still sends.
const LINGER_MS = 2000;

/** One accepted connection. */
export class Http1Connection {
  readonly #conn: Deno.TcpConn;
  readonly #ctx: ConnectionContext;
  readonly #reader: SocketReader;
  readonly #sink: ResponseSink = { write: (bytes) => this.#write(bytes) };
  readonly #localHost: string;
  #closed = false;
  #stalled = false;
  #handling = false;
  #responding = false;
  #request: AbortController | undefined;
  // Aborted when the socket closes: cancels a response body being written.
  readonly #gone = new AbortController();
  #readDeadline = Infinity;
  #onReadTimeout: () => void = () => {};
  #writeDeadline = Infinity;

  constructor(conn: Deno.TcpConn, ctx: ConnectionContext) {
    this.#conn = conn;
    this.#ctx = ctx;
    this.#reader = new SocketReader(conn);
    const local = conn.localAddr as Deno.NetAddr;
    this.#localHost = local.hostname.includes(":")
      ? `[${local.hostname}]:${local.port}`
      : `${local.hostname}:${local.port}`;
    conn.setNoDelay(true); // each write is a whole head or SSE event: send it now
  }

  /** Serves requests until the connection ends; never rejects. */
  async run(): Promise<void> {
    try {
      let first = true;
      while (!this.#closed) {
        const head = await this.#readHead(first);
        if (head === undefined) return;
        first = false;
        if (!(await this.#exchange(head))) return;
      }
    } catch (err) {
      await this.#answerError(err);
    } finally {
      this.close();
    }
  }

  /** Enforces the deadlines; the server calls it periodically. */
  check(now: number): void {
    if (now > this.#writeDeadline) {
      this.#stalled = true;
      this.close();
    } else if (now > this.#readDeadline) {
      this.#readDeadline = Infinity;
      this.#onReadTimeout();
    }
  }

  /** Closes the socket and aborts the request in progress. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#readDeadline = this.#writeDeadline = Infinity;
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
    const reason = new CancelledError(
      this.#stalled
        ? `The client stopped reading the response for ${this.#ctx.limits.writeStallTimeoutMs} ms.`
        : "The connection closed.",
    );
    // The body first: a stream cancelled by its reader ends quietly, counted as cancelled.
    this.#gone.abort(reason);
    this.#request?.abort(reason);
  }

  /** Closes the connection unless a request is being handled (for shutdown). */
  closeIfIdle(): void {
    if (!this.#handling) this.close();
  }

  /** Aborts the signal of the request in progress, if any. */
  abortRequest(reason: unknown): void {
    this.#request?.abort(reason);
  }

  // The next request head; undefined when the connection ended (or idled out) before one came.
  async #readHead(first: boolean): Promise<RequestHead | undefined> {
    const reader = this.#reader;
    const { headerTimeoutMs, keepAliveTimeoutMs, maxHeaderBytes } = this.#ctx.limits;
    let scanned = 0;
    let started = false;
    if (first) {
      // A new connection has the header timeout from its first moment.
      started = true;
      this.#arm(headerTimeoutMs, () => this.#timeOut());
    }
    while (true) {
      // Empty lines before a request are allowed (RFC 9112, 2.2).
      while (reader.available > 0 && isLineEnd(reader.buf[reader.start])) reader.skip(1);
      if (reader.available > 0) {
        if (!started) {
          started = true;
          this.#arm(headerTimeoutMs, () => this.#timeOut());
        }
        const end = findHeadEnd(reader.buf, reader.start + scanned, reader.end);
        if (end !== -1 && end - reader.start <= maxHeaderBytes) {
          this.#readDeadline = Infinity;
          const head = parseRequestHead(reader.buf.subarray(reader.start, end));
          reader.skip(end - reader.start);
          return head;
        }
        if (end !== -1 || reader.available > maxHeaderBytes) {
          throw badRequest(
            `The request head is larger than this server accepts (${maxHeaderBytes} bytes).`,
            "request_header_fields_too_large",
            431,
          );
        }
        scanned = Math.max(0, reader.available - 3);
      } else if (!started) {
        this.#arm(keepAliveTimeoutMs, () => this.close());
      }
      // Closed, or a 408 for this connection is being written.
      if (!(await reader.fill()) || this.#handling) return undefined;
    }
  }

  // Handles one request; true when the connection may carry the next one.
  async #exchange(head: RequestHead): Promise<boolean> {
    this.#handling = true;
    const request = new AbortController();
    this.#request = request;
    const { limits } = this.#ctx;
    let body: RequestBody | undefined;
    let bytes: Uint8Array<ArrayBuffer> | undefined;
    const length = head.contentLength ?? 0;
    if (!head.chunked && length > 0 && this.#reader.available >= length) {
      // The whole body came with the head (the usual case): no stream to pull it through.
      bytes = this.#reader.take(length);
      this.#watchForClose(request);
    } else if (head.chunked || length > 0) {
      body = new RequestBody(this.#reader, {
        length: head.chunked ? null : head.contentLength,
        maxHeaderBytes: limits.maxHeaderBytes,
        sendContinue: head.expectContinue ? () => this.#sendContinue() : undefined,
        onEnd: (error) => {
          this.#readDeadline = Infinity;
          if (error === undefined) this.#watchForClose(request);
          else if (error instanceof CancelledError) request.abort(error);
        },
      });
      const timedOut = body;
      this.#arm(
        limits.bodyTimeoutMs,
        () => timedOut.fail(requestTimeout("body", limits.bodyTimeoutMs)),
      );
    } else {
      this.#watchForClose(request);
    }
    let done!: () => void;
    const completed = new Promise<void>((resolve) => (done = resolve));
    try {
      const res = await this.#respond(head, bytes ?? body?.stream, request.signal, completed);
      this.#responding = true;
      const options = {
        head: head.method === "HEAD",
        http10: head.minor === 0,
        signal: this.#gone.signal,
        close: !head.keepAlive || this.#ctx.stopping ||
          (body !== undefined && !body.drainable(DRAIN_LIMIT_BYTES)),
      };
      let outcome: WriteOutcome;
      try {
        outcome = await writeResponse(this.#sink, res, options);
      } catch (err) {
        if (err instanceof CancelledError || this.#closed) return false;
        // The body failed before anything was sent: answer with the error instead.
        outcome = await writeResponse(this.#sink, this.#ctx.onError(err), {
          ...options,
          close: true,
        });
      }
      if (outcome.bodyError !== undefined && !(outcome.bodyError instanceof SvcException)) {
        this.#ctx.logger.warn("a response body failed mid-way; the connection was closed", {
          error: String(outcome.bodyError),
        });
      }
      let reusable = outcome.reusable;
      if (body !== undefined && !body.complete) {
        if (reusable) reusable = await body.drain(DRAIN_LIMIT_BYTES);
        if (!reusable) await this.#linger();
      }
      return reusable && !this.#closed && !this.#ctx.stopping && !this.#reader.eof;
    } catch {
      return false; // the client went away mid-response
    } finally {
      this.#readDeadline = Infinity;
      this.#request = undefined;
      this.#handling = false;
      this.#responding = false;
      done();
    }
  }

  async #respond(
    head: RequestHead,
    body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | undefined,
    signal: AbortSignal,
    completed: Promise<void>,
  ): Promise<Response> {
    let req: Request;
    try {
      const url = requestUrl(head.target, head.host, this.#localHost);
      // GET and HEAD bodies are allowed on the wire but not in a Request: dropped (or drained).
      const noBody = head.method === "GET" || head.method === "HEAD";
      req = new Request(url, {
        method: head.method,
        headers: head.headers,
        body: noBody ? null : body,
        signal,
      });
    } catch (err) {
      return protocolErrorResponse(
        err instanceof SvcException ? err : badRequest(
          `The request cannot be handled: ${err instanceof Error ? err.message : err}`,
          "invalid_request",
        ),
      );
    }
    try {
      return await this.#ctx.handler(req, {
        remoteAddr: this.#conn.remoteAddr as Deno.NetAddr,
        completed,
        signal,
      });
    } catch (err) {
      return this.#ctx.onError(err);
    }
  }

  // One read left pending while the handler runs: it sees the client leave (or buffers the next
  // pipelined request, which is parsed after this response).
  #watchForClose(request: AbortController): void {
    const reader = this.#reader;
    if (reader.start === 0 && reader.end === reader.buf.length) return; // full: nothing to watch
    reader.fill().then((more) => {
      if (!more && this.#request === request) {
        request.abort(new CancelledError("The client closed the connection."));
      }
    });
  }

  async #sendContinue(): Promise<void> {
    // Too late once the final answer has started (the handler answered before reading).
    if (!this.#responding) await this.#write(CONTINUE_BYTES);
  }

  async #write(bytes: Uint8Array): Promise<void> {
    if (this.#closed) throw new CancelledError("The connection closed.");
    this.#writeDeadline = performance.now() + this.#ctx.limits.writeStallTimeoutMs;
    try {
      let offset = 0;
      while (offset < bytes.byteLength) {
        offset += await this.#conn.write(offset === 0 ? bytes : bytes.subarray(offset));
      }
    } catch (err) {
      this.close();
      throw new CancelledError(
        this.#stalled
          ? `The client stopped reading the response for ${this.#ctx.limits.writeStallTimeoutMs} ms.`
          : "The client went away before the response was complete.",
        { cause: err },
      );
    } finally {
      this.#writeDeadline = Infinity;
    }
  }

  #arm(ms: number, onTimeout: () => void): void {
    this.#readDeadline = performance.now() + ms;
    this.#onReadTimeout = onTimeout;
  }

  // The head did not arrive in time: say so (408) and close.
  #timeOut(): void {
    void this.#answerError(requestTimeout("headers", this.#ctx.limits.headerTimeoutMs)).finally(
      () => this.close(),
    );
  }

  // Answers a protocol error (and the connection closes after it).
  async #answerError(err: unknown): Promise<void> {
    if (this.#closed || this.#handling) return;
    if (!(err instanceof SvcException)) {
      this.#ctx.logger.error("unexpected error on an HTTP connection", {
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
      return;
    }
    this.#handling = true; // one answer only (a timeout may race a parse error)
    try {
      await writeResponse(this.#sink, protocolErrorResponse(err), { close: true });
      await this.#linger();
    } catch {
      // The client is gone.
    }
  }

  // Before closing on a client that may still be sending: stop writing (FIN), then read and
  // discard for a moment, so unread input does not turn the close into a reset that can destroy
  // the answer before the client reads it.
  async #linger(): Promise<void> {
    if (this.#closed || this.#reader.eof) return;
    try {
      await this.#conn.closeWrite();
    } catch {
      return;
    }
    this.#arm(LINGER_MS, () => this.close());
    const reader = this.#reader;
    while (!this.#closed) {
      reader.skip(reader.available);
      if (!(await reader.fill())) return;
    }
  }
}

function isLineEnd(byte: number): boolean {
  return byte === LF || byte === CR;
}
