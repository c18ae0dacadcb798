/**
 * Serves a gateway on a port: {@link createGateway} plus `serveApp`, with a stop that drains in
 * the right order (stop accepting, let requests finish, stop started engines).
 *
 * @module
 */
import { ConfigurationError, isAccessRefused } from "../core/errors.ts";
import type { HttpLimits } from "../http/http1/limits.ts";
import { serveApp, type ServedApp } from "../http/serve.ts";
import { createGateway, type Gateway, type GatewayOptions } from "./gateway.ts";

/** Options of {@link startGateway}. */
export interface GatewayServerOptions extends GatewayOptions {
  /** Listen address (default 127.0.0.1). */
  hostname?: string;
  /** Port (default 0: any free port); the CLI passes SvcPorts.GATEWAY_DEFAULT. */
  port?: number;
  /** How long stop() waits for requests in flight (default 10 s). */
  shutdownTimeoutMs?: number;
  /** Connection cap and timeouts of the HTTP server (default `DEFAULT_HTTP_LIMITS`). */
  httpLimits?: Partial<HttpLimits>;
}

/** A running gateway. */
export interface GatewayServer {
  /** The gateway served. */
  readonly gateway: Gateway;
  /** The listening server. */
  readonly served: ServedApp;
  /** `http://host:port`. */
  readonly url: string;
  /** `http://host:port/v1`: the `{base_url}` of the spec. */
  readonly baseUrl: string;
  /** Stops accepting, drains requests, stops started engines and health checks. */
  stop(): Promise<void>;
}

/**
 * Starts the gateway. A port in use or a missing net permission is a ConfigurationError with one
 * clear line, and nothing is left running.
 *
 * @example
 * ```ts
 * import { startGateway } from "@svc/cli/gateway";
 * const server = await startGateway({ port: 0 });
 * console.log(server.baseUrl);
 * await server.stop();
 * ```
 */
export async function startGateway(options: GatewayServerOptions = {}): Promise<GatewayServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const port = options.port ?? 0;
  const gateway = await createGateway({
    ...options,
    maxBodyBytes: options.maxBodyBytes ?? options.httpLimits?.maxBodyBytes,
  });
  let served: ServedApp;
  try {
    served = serveApp(gateway.handler, {
      hostname,
      port,
      shutdownTimeoutMs: options.shutdownTimeoutMs,
      limits: options.httpLimits,
      logger: options.logger,
    });
  } catch (err) {
    await gateway.close();
    if (err instanceof Deno.errors.AddrInUse) {
      throw new ConfigurationError(
        `port ${port} on ${hostname} is already in use; stop what runs there or pass --port <other>`,
        { code: "port_in_use", param: "port", cause: err },
      );
    }
    if (isAccessRefused(err)) {
      const where = port === 0 ? hostname : `${hostname}:${port}`;
      throw new ConfigurationError(
        `no permission to listen on ${where}: run with --allow-net=${where}`,
        { code: "permission_denied", param: "port", cause: err },
      );
    }
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    gateway,
    served,
    url: served.url,
    baseUrl: `${served.url}/v1`,
    stop: () =>
      stopping ??= (async () => {
        await served.shutdown();
        await gateway.close();
      })(),
  };
}
