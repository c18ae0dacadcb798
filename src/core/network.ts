/**
 * Network utilities: free ports, port checks, the local IP address, waiting for a listener.
 * Generic helpers; `SvcPorts` in `src/config/` holds the port numbers of the product.
 *
 * @example
 * ```ts
 * import { checkPortAvailable, getFreePort } from "@svc/cli";
 * const port = getFreePort();
 * console.log(checkPortAvailable(port, "127.0.0.1")); // true (most likely)
 * ```
 *
 * @module
 */

import {
  CancelledError,
  ConfigurationError,
  isAccessRefused,
  ServiceError,
  ValidationError,
} from "./errors.ts";
import { sleep } from "./sleep.ts";

/** One network interface address, as `Deno.networkInterfaces()` reports it. */
export interface InterfaceAddress {
  /** Address family. */
  family: "IPv4" | "IPv6";
  /** Interface name, e.g. `eth0`. */
  name: string;
  /** The address, e.g. `192.168.1.20`. */
  address: string;
}

function validatePort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ValidationError(`port must be an integer 1-65535, got ${port}`, { param: "port" });
  }
}

function permissionError(err: unknown, what: string, flag: string): ConfigurationError | null {
  if (isAccessRefused(err)) {
    return new ConfigurationError(`${what} needs permission: run with ${flag}`, { cause: err });
  }
  return null;
}

/**
 * Asks the OS for a free TCP port on `host` (default `127.0.0.1`) and returns it. Another
 * program may take it before you bind it; prefer binding port 0 yourself where you can.
 *
 * @example
 * ```ts
 * const port = getFreePort();
 * ```
 */
export function getFreePort(host = "127.0.0.1"): number {
  let listener: Deno.TcpListener;
  try {
    listener = Deno.listen({ hostname: host, port: 0 });
  } catch (err) {
    throw permissionError(err, `listening on ${host}`, `--allow-net=${host}`) ??
      new ServiceError(`cannot get a free port on ${host}: ${(err as Error).message}`, {
        cause: err,
      });
  }
  const port = listener.addr.port;
  listener.close();
  return port;
}

/**
 * True when a TCP listener could be bound to `port` on `host` now (default `0.0.0.0`, which
 * also fails when any single address holds the port). Raises `ValidationError` for a port out of
 * range and `ConfigurationError` when the net permission is missing.
 *
 * @example
 * ```ts
 * if (!checkPortAvailable(8000)) console.log("port 8000 is taken");
 * ```
 */
export function checkPortAvailable(port: number, host = "0.0.0.0"): boolean {
  validatePort(port);
  try {
    Deno.listen({ hostname: host, port }).close();
    return true;
  } catch (err) {
    const denied = permissionError(err, `checking port ${port} on ${host}`, `--allow-net=${host}`);
    if (denied !== null) throw denied;
    // In use, or not bindable (an address of another machine): unavailable either way.
    return false;
  }
}

/** Options of {@link getLocalIp}. */
export interface LocalIpOptions {
  /** Interfaces to choose from (default `Deno.networkInterfaces()`). */
  interfaces?: InterfaceAddress[];
}

/**
 * The first IPv4 address of this machine that is not loopback or link-local, else `127.0.0.1`
 * (also when the interfaces cannot be read, e.g. without `--allow-sys`).
 *
 * @example
 * ```ts
 * console.log(`reachable at http://${getLocalIp()}:8000/v1`);
 * ```
 */
export function getLocalIp(options: LocalIpOptions = {}): string {
  let interfaces = options.interfaces;
  if (interfaces === undefined) {
    try {
      interfaces = Deno.networkInterfaces();
    } catch {
      return "127.0.0.1";
    }
  }
  const found = interfaces.find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.") && !i.address.startsWith("169.254.") &&
    i.address !== "0.0.0.0"
  );
  return found?.address ?? "127.0.0.1";
}

/** Options of {@link waitForPort}. */
export interface WaitForPortOptions {
  /** Host to connect to (default `127.0.0.1`). */
  host?: string;
  /** Give up after this long (default 10000 ms). */
  timeoutMs?: number;
  /** Pause between attempts (default 50 ms). */
  intervalMs?: number;
  /** Stops waiting early (raises `CancelledError`). */
  signal?: AbortSignal;
}

/**
 * Waits until something accepts TCP connections on `port`. Raises `ServiceError` after
 * `timeoutMs`, `CancelledError` when `signal` aborts.
 *
 * @example
 * ```ts
 * await waitForPort(8000, { timeoutMs: 30_000 });
 * ```
 */
export async function waitForPort(port: number, options: WaitForPortOptions = {}): Promise<void> {
  validatePort(port);
  const host = options.host ?? "127.0.0.1";
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  while (true) {
    if (options.signal?.aborted) throw new CancelledError(`stopped waiting for ${host}:${port}`);
    try {
      const conn = await Deno.connect({ hostname: host, port });
      conn.close();
      return;
    } catch (err) {
      const denied = permissionError(err, `connecting to ${host}:${port}`, `--allow-net=${host}`);
      if (denied !== null) throw denied;
      lastError = (err as Error).message;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new ServiceError(
        `nothing is listening on ${host}:${port} after ${timeoutMs} ms (${lastError}); ` +
          "check that the server started and uses this port",
      );
    }
    await sleep(Math.min(options.intervalMs ?? 50, left), options.signal);
  }
}
