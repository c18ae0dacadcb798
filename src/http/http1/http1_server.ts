/**
 * Our HTTP/1.1 server on `Deno.listen`: the accept loop with the connection cap (one over it is
 * answered 503 and closed), a sweep that enforces every connection's deadlines, survival of
 * `EMFILE`/`ENFILE` (log, back off, keep serving: the process never dies of fd exhaustion), and a
 * graceful shutdown (stop accepting, close idle connections, let requests in flight finish).
 *
 * @module
 */
import { defaultHttpLogger, type HttpLogger } from "../logger.ts";
import { type ConnectionContext, Http1Connection, type Http1Handler } from "./connection.ts";
import { type HttpLimits, resolveHttpLimits } from "./limits.ts";
import { protocolErrorResponse, tooManyConnections } from "./protocol_error.ts";
import { writeResponse } from "./response_writer.ts";

/** Options of {@link Http1Server}. */
export interface Http1ServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  limits?: Partial<HttpLimits>;
  logger?: HttpLogger;
  /** The answer when the handler throws. */
  onError: (err: unknown) => Response;
}

const MAX_BACKOFF_MS = 1000;
const WARN_INTERVAL_MS = 60_000;
const MAX_SWEEP_MS = 1000;

/**
 * A listening HTTP/1.1 server.
 *
 * @example
 * ```ts
 * import { Http1Server } from "./http1_server.ts";
 * const server = new Http1Server(() => Promise.resolve(new Response("hi")), {
 *   hostname: "127.0.0.1",
 *   port: 0,
 *   onError: () => new Response(null, { status: 500 }),
 * });
 * await server.shutdown();
 * ```
 */
export class Http1Server {
  /** The address listened on. */
  readonly addr: Deno.NetAddr;
  /** Resolves once shut down and every connection is closed. */
  readonly finished: Promise<void>;
  readonly #listener: Deno.TcpListener;
  readonly #conns = new Set<Http1Connection>();
  readonly #ctx: ConnectionContext & { stopping: boolean };
  readonly #sweep: ReturnType<typeof setInterval>;
  #finish!: () => void;
  #acceptEnded = false;
  #wake: (() => void) | undefined;

  constructor(handler: Http1Handler, options: Http1ServerOptions) {
    const limits = resolveHttpLimits(options.limits);
    this.#listener = Deno.listen({ hostname: options.hostname, port: options.port });
    this.addr = this.#listener.addr as Deno.NetAddr;
    this.#ctx = {
      handler,
      limits,
      logger: options.logger ?? defaultHttpLogger(),
      onError: options.onError,
      stopping: false,
    };
    this.finished = new Promise((resolve) => (this.#finish = resolve));
    // One timer for every deadline of every connection, at a quarter of the shortest limit.
    const shortest = Math.min(
      limits.headerTimeoutMs,
      limits.bodyTimeoutMs,
      limits.keepAliveTimeoutMs,
      limits.writeStallTimeoutMs,
    );
    this.#sweep = setInterval(() => {
      const now = performance.now();
      for (const conn of this.#conns) conn.check(now);
    }, Math.min(MAX_SWEEP_MS, Math.max(10, shortest / 4)));
    this.#acceptLoop().finally(() => {
      this.#acceptEnded = true;
      this.#maybeFinished();
    });
  }

  /** Stops accepting and closes idle connections; resolves when the last connection closed. */
  shutdown(): Promise<void> {
    if (!this.#ctx.stopping) {
      this.#ctx.stopping = true;
      try {
        this.#listener.close();
      } catch {
        // Already closed.
      }
      this.#wake?.();
      for (const conn of this.#conns) conn.closeIfIdle();
    }
    return this.finished;
  }

  /** Aborts the signal of every request in flight with `reason`. */
  abortInFlight(reason: unknown): void {
    for (const conn of this.#conns) conn.abortRequest(reason);
  }

  /** Closes every connection now. */
  closeAll(): void {
    for (const conn of this.#conns) conn.close();
  }

  async #acceptLoop(): Promise<void> {
    const { limits, logger } = this.#ctx;
    let backoffMs = 0;
    let warnedAt = -Infinity;
    let failures = 0;
    while (!this.#ctx.stopping) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch (err) {
        if (this.#ctx.stopping) return;
        if (err instanceof Deno.errors.BadResource) {
          logger.error("the listening socket was closed; no new connections are accepted");
          return;
        }
        // EMFILE, ENFILE and the like: connections closing will free descriptors. Said once a
        // minute at most, as a flood makes it fail again after every connection that closes.
        failures++;
        if (performance.now() - warnedAt > WARN_INTERVAL_MS) {
          warnedAt = performance.now();
          logger.warn("cannot accept connections; retrying with back-off", {
            error: err instanceof Error ? err.message : String(err),
            failures,
            open: this.#conns.size,
          });
        }
        backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(10, backoffMs * 2));
        await this.#sleep(backoffMs);
        continue;
      }
      backoffMs = 0;
      if (this.#conns.size >= limits.maxConnections) {
        refuse(conn, limits.maxConnections);
        continue;
      }
      const connection = new Http1Connection(conn, this.#ctx);
      this.#conns.add(connection);
      connection.run().then(() => {
        this.#conns.delete(connection);
        this.#maybeFinished();
      });
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #maybeFinished(): void {
    if (!this.#ctx.stopping || !this.#acceptEnded || this.#conns.size > 0) return;
    clearInterval(this.#sweep);
    this.#finish();
  }
}

// Over the cap: a 503 the client can act on, then close, without reading the request (the
// answer is small enough to fit the socket's buffer, so the write does not wait on the client).
function refuse(conn: Deno.Conn, max: number): void {
  const sink = { write: (bytes: Uint8Array) => conn.write(bytes).then(() => {}) };
  writeResponse(sink, protocolErrorResponse(tooManyConnections(max)), { close: true })
    .catch(() => {})
    .finally(() => {
      try {
        conn.close();
      } catch {
        // Already closed.
      }
    });
}
