/**
 * The edge: our HTTP/1.1 server (`./http1/`) on a port, every request handed to an app, with the
 * connection limits and timeouts of {@link HttpLimits}, and a graceful shutdown (stop accepting,
 * let in-flight requests finish, then abort what is left after a timeout).
 *
 * @module
 */
import { ServiceUnavailableError } from "../core/errors.ts";
import { errorResponse } from "./error_response.ts";
import type { AppHandler } from "./http_app.ts";
import { Http1Server } from "./http1/http1_server.ts";
import type { HttpLimits } from "./http1/limits.ts";
import { defaultHttpLogger, type HttpLogger } from "./logger.ts";

/** Options of {@link serveApp}. */
export interface ServeAppOptions {
  /** Address to listen on (default `127.0.0.1`). */
  hostname?: string;
  /** Port (default 0: any free port; read it from `addr`). */
  port?: number;
  /** Aborting it shuts the server down gracefully. */
  signal?: AbortSignal;
  /** Called once listening. */
  onListen?: (addr: Deno.NetAddr) => void;
  /** How long shutdown waits for in-flight requests before aborting them (default 10 s). */
  shutdownTimeoutMs?: number;
  /** Connection cap and timeouts (default `DEFAULT_HTTP_LIMITS`). */
  limits?: Partial<HttpLimits>;
  /** Log of the server. */
  logger?: HttpLogger;
}
/** A running server. */
export interface ServedApp {
  /** Where it listens. */
  readonly addr: Deno.NetAddr;
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  /** Resolves when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting, waits for in-flight requests (up to the timeout), then resolves. */
  shutdown(): Promise<void>;
}

/**
 * Serves `handler` over HTTP/1.1. In-flight requests see the client leaving and a forced shutdown
 * through their `info.signal`; a shutdown's reason is a 503 `ServiceUnavailableError`.
 *
 * @example
 * ```ts
 * import { createEngineApp } from "@svc/cli/server";
 * import { serveApp } from "@svc/cli/server";
 * const server = serveApp(createEngineApp({ engines: [] }), { port: 0 });
 * console.log(server.url);
 * await server.shutdown();
 * ```
 */
export function serveApp(handler: AppHandler, options: ServeAppOptions = {}): ServedApp {
  const logger = options.logger ?? defaultHttpLogger();
  const server = new Http1Server(handler, {
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    limits: options.limits,
    logger,
    // The app never throws; this is the last line of defence.
    onError: (err) => errorResponse(err, { logger }),
  });
  options.onListen?.(server.addr);

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      const graceful = server.shutdown();
      const timeoutMs = options.shutdownTimeoutMs ?? 10_000;
      if (await lateAfter(graceful, timeoutMs)) {
        server.abortInFlight(
          new ServiceUnavailableError(
            "The server is shutting down; retry on another instance.",
            { code: "server_shutting_down" },
          ),
        );
        // Aborted work ends its responses (a stream with a final error event); a handler that
        // ignores its signal is cut off after one more timeout.
        if (await lateAfter(graceful, timeoutMs)) server.closeAll();
        await graceful;
      }
    })();
    return stopping;
  };
  if (options.signal?.aborted) void shutdown();
  options.signal?.addEventListener("abort", () => void shutdown(), { once: true });

  const addr = server.addr;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return { addr, url: `http://${host}:${addr.port}`, finished: server.finished, shutdown };
}

// True when `done` did not settle within `ms`.
async function lateAfter(done: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  try {
    return await Promise.race([done.then(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
