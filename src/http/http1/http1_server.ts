/**
 * Our HTTP/1.1 server on `Deno.listen`: the accept loop with the connection caps, overall and per
 * client address (one over either is answered 503 and closed), a sweep that enforces every
 * connection's deadlines, survival of `EMFILE`/`ENFILE` (log, back off, keep serving: the process
 * never dies of fd exhaustion), and a graceful shutdown (stop accepting, close idle connections, let
 * requests in flight finish).
 *
 * @module
 */
import { errorMessage, type SvcException } from "../../core/errors.ts";
import { defaultHttpLogger, type HttpLogger } from "../logger.ts";
import { ClientConnections } from "./client_limit.ts";
import { type ConnectionContext, Http1Connection, type Http1Handler } from "./connection.ts";
import { type HttpLimits, resolveHttpLimits } from "./limits.ts";
import {
  protocolErrorResponse,
  tooManyClientConnections,
  tooManyConnections,
} from "./protocol_error.ts";
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
  /**
   * Count loopback peers against `maxConnectionsPerClient` too (default false: a local proxy or
   * the gateway is one loopback address for all its clients).
   */
  capLoopbackClients?: boolean;
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
  readonly #clients: ClientConnections;
  readonly #ctx: ConnectionContext & { stopping: boolean };
  readonly #sweep: ReturnType<typeof setInterval>;
  #finish!: () => void;
  #acceptEnded = false;
  #wake: (() => void) | undefined;

  constructor(handler: Http1Handler, options: Http1ServerOptions) {
    const limits = resolveHttpLimits(options.limits);
    this.#listener = Deno.listen({ hostname: options.hostname, port: options.port });
    this.addr = this.#listener.addr as Deno.NetAddr;
    this.#clients = new ClientConnections(limits.maxConnectionsPerClient, {
      capLoopback: options.capLoopbackClients,
    });
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

  /** Open connections counted against the per-client cap for `hostname`'s client. */
  clientConnections(hostname: string): number {
    return this.#clients.count(hostname);
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
            error: errorMessage(err),
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
        refuse(conn, tooManyConnections(limits.maxConnections));
        continue;
      }
      const release = this.#clients.admit((conn.remoteAddr as Deno.NetAddr).hostname);
      if (release === undefined) {
        refuse(conn, tooManyClientConnections(limits.maxConnectionsPerClient));
        continue;
      }
      let connection: Http1Connection;
      try {
        connection = new Http1Connection(conn, this.#ctx);
      } catch {
        // The socket failed between accept and setup (a reset): nothing to serve or count.
        release();
        closeQuietly(conn);
        continue;
      }
      this.#conns.add(connection);
      // run() settles once, when the connection is over however it ended: the one place a
      // connection is counted out.
      connection.run().finally(() => {
        release();
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

// Over a cap: a 503 the client can act on, then close, without reading the request (the
// answer is small enough to fit the socket's buffer, so the write does not wait on the client).
function refuse(conn: Deno.Conn, err: SvcException): void {
  const sink = { write: (bytes: Uint8Array) => conn.write(bytes).then(() => {}) };
  writeResponse(sink, protocolErrorResponse(err), { close: true })
    .catch(() => {})
    .finally(() => closeQuietly(conn));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
