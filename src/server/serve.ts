/**
 * `Deno.serve` at the edge: listen, hand every request to an app, and shut down gracefully
 * (stop accepting, let in-flight requests finish, then abort what is left after a timeout).
 *
 * @module
 */
import { ServiceUnavailableError } from "../core/errors.ts";
import { errorResponse } from "./error_response.ts";
import type { AppHandler } from "./http_app.ts";
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
  logger?: HttpLogger;
}

/** A running server. */
export interface ServedApp {
  readonly addr: Deno.NetAddr;
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  /** Resolves when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting, waits for in-flight requests (up to the timeout), then resolves. */
  shutdown(): Promise<void>;
}

/**
 * Serves `handler` with `Deno.serve`. In-flight requests see the client leaving and a shutdown
 * through their `info.signal`; a shutdown's reason is a 503 `ServiceUnavailableError`.
 *
 * @example
 * ```ts
 * import { createEngineApp } from "./engine_app.ts";
 * import { serveApp } from "./serve.ts";
 * const server = serveApp(createEngineApp({ engines: [] }), { port: 0 });
 * console.log(server.url);
 * await server.shutdown();
 * ```
 */
export function serveApp(handler: AppHandler, options: ServeAppOptions = {}): ServedApp {
  const logger = options.logger ?? defaultHttpLogger();
  // One controller per in-flight request, not one shared signal: composing a long-lived signal
  // into every request's (AbortSignal.any) leaks memory in Deno.
  const inFlight = new Set<AbortController>();
  let stopReason: ServiceUnavailableError | undefined;
  const server = Deno.serve(
    {
      hostname: options.hostname ?? "127.0.0.1",
      port: options.port ?? 0,
      onListen: (addr) => options.onListen?.(addr),
      // The app never throws; this is the last line of defence.
      onError: (err) => errorResponse(err, { logger }),
    },
    (req, info) => {
      // The app's one signal for both early ends: the client leaving and a forced shutdown (a
      // listener here is much cheaper than AbortSignal.any per request).
      const controller = new AbortController();
      if (stopReason !== undefined) controller.abort(stopReason);
      const clientSignal = req.signal;
      clientSignal.addEventListener("abort", () => controller.abort(clientSignal.reason), {
        once: true,
      });
      inFlight.add(controller);
      const forget = () => inFlight.delete(controller);
      info.completed.then(forget, forget);
      return handler(req, {
        remoteAddr: info.remoteAddr,
        completed: info.completed,
        signal: controller.signal,
      });
    },
  );

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      const graceful = server.shutdown();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), options.shutdownTimeoutMs ?? 10_000);
      });
      const late = await Promise.race([graceful.then(() => false), timedOut]);
      clearTimeout(timer);
      if (late) {
        stopReason = new ServiceUnavailableError(
          "The server is shutting down; retry on another instance.",
          { code: "server_shutting_down" },
        );
        for (const controller of inFlight) controller.abort(stopReason);
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
