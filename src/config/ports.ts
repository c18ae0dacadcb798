/**
 * Port allocation of Svc. Every port number the project uses comes from {@link SvcPorts}: no other
 * module writes a port literal.
 *
 * @module
 */

import { ConfigurationError, ValidationError } from "../core/errors.ts";

/**
 * Reads a text file under /proc; returns `null` when it cannot be read. Injectable for tests.
 * The default reads the kernel release through `Deno.osRelease()` (needs `--allow-sys`), then the
 * files themselves (Deno 2 grants /proc only with `--allow-all`).
 */
export type ProcTextReader = (path: string) => string | null;

/** Options of the WSL detection. */
export interface WslDetectionOptions {
  /** Reads /proc files; defaults to `Deno.readTextFileSync` (only on Linux). */
  readProcText?: ProcTextReader;
}

/** Options of {@link SvcPorts.isAvailable}. */
export interface PortCheckOptions {
  /** How long the connect probe may wait for an answer, in milliseconds (default 500). */
  connectTimeoutMs?: number;
}

/** The /proc files whose text names the Microsoft kernel under WSL. */
const OSRELEASE_FILE = "/proc/sys/kernel/osrelease";
const WSL_PROC_FILES = [OSRELEASE_FILE, "/proc/version"] as const;
// WSL kernels report e.g. "5.15.153.1-microsoft-standard-WSL2".
const WSL_PATTERN = /microsoft|wsl2/i;

let cachedWsl: boolean | null = null;

function defaultProcReader(path: string): string | null {
  // Outside Linux there is no /proc and no WSL; without permission we must not prompt.
  if (Deno.build.os !== "linux") return null;
  if (path === OSRELEASE_FILE) {
    // Deno 2 wants --allow-all for /proc files; osRelease() gives the same text with --allow-sys.
    try {
      if (Deno.permissions.querySync({ name: "sys", kind: "osRelease" }).state === "granted") {
        return Deno.osRelease();
      }
    } catch {
      // fall through to the file
    }
  }
  try {
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return null;
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/**
 * Detects WSL2 from the kernel release text (/proc/sys/kernel/osrelease, /proc/version), which
 * names "microsoft" / "WSL2" there. Unreadable text counts as "not WSL". The answer of the default
 * reader is cached.
 *
 * @example
 * ```ts
 * import { isWsl } from "@svc/cli";
 * console.log(isWsl({ readProcText: () => "5.15.153.1-microsoft-standard-WSL2" })); // true
 * ```
 */
export function isWsl(options: WslDetectionOptions = {}): boolean {
  const reader = options.readProcText;
  if (reader === undefined && cachedWsl !== null) return cachedWsl;
  const read = reader ?? defaultProcReader;
  let result = false;
  for (const path of WSL_PROC_FILES) {
    let text: string | null;
    try {
      text = read(path);
    } catch {
      text = null;
    }
    if (text !== null && WSL_PATTERN.test(text)) {
      result = true;
      break;
    }
  }
  if (reader === undefined) cachedWsl = result;
  return result;
}

function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ValidationError(`port ${port} is invalid: expected an integer from 1 to 65535`, {
      param: "port",
    });
  }
}

function netPermissionError(host: string, port: number, cause: unknown): ConfigurationError {
  return new ConfigurationError(
    `no network permission to check port ${port} on ${host}: run with --allow-net=${host}`,
    { cause, param: "port" },
  );
}

// Where a client would reach a server bound to `host`.
function connectHostFor(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "::1";
  return host;
}

function canBind(port: number, host: string): boolean {
  try {
    const listener = Deno.listen({ port, hostname: host, transport: "tcp" });
    listener.close();
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) throw netPermissionError(host, port, err);
    // Not the port's fault: the host is no address of this machine, or no address at all.
    if (err instanceof Deno.errors.AddrNotAvailable) {
      throw new ConfigurationError(
        `host ${host} is not an address of this machine; pass --host with one of its ` +
          "addresses (e.g. 127.0.0.1, or 0.0.0.0 for all)",
        { code: "invalid_host", param: "host" },
      );
    }
    if (err instanceof Error && /failed to lookup address/i.test(err.message)) {
      throw new ConfigurationError(
        `host '${host}' is not a valid address or a name that resolves; pass --host with an ` +
          "address of this machine (e.g. 127.0.0.1, or 0.0.0.0 for all)",
        { code: "invalid_host", param: "host" },
      );
    }
    // AddrInUse, or the OS refuses (a privileged port): not usable.
    return false;
  }
}

async function somethingListens(port: number, host: string, timeoutMs: number): Promise<boolean> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const conn = await Deno.connect({ port, hostname: host, signal: controller.signal });
    conn.close();
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) throw netPermissionError(host, port, err);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The port constants of the spec and the helpers that choose among them.
 *
 * @example
 * ```ts
 * import { SvcPorts } from "@svc/cli";
 * console.log(SvcPorts.GATEWAY_DEFAULT, SvcPorts.getLlmPorts()); // 8000 [8001, 8901]
 * ```
 */
export class SvcPorts {
  /** Gateway (unified API server), OpenAI-compatible. */
  static readonly GATEWAY_DEFAULT = 8000 as const;
  /** Inference engine (may be unusable under WSL2). */
  static readonly LLM_DEFAULT = 8001 as const;
  /** Fallback LLM port for WSL2. */
  static readonly LLM_WSL_FALLBACK = 8901 as const;
  /** Benchmark LLM port (same value as LLM_WSL_FALLBACK). */
  static readonly BENCHMARK_LLM = 8901 as const;
  /** Visual studio backend API. */
  static readonly STUDIO_BACKEND = 8080 as const;
  /** Visual studio frontend. */
  static readonly STUDIO_FRONTEND = 5173 as const;
  /** Embedding server (default of `svc llm serve --with-embedding`). */
  static readonly EMBEDDING_DEFAULT = 8090 as const;

  private constructor() {}

  /**
   * The LLM port to use on this host: 8901 under WSL2 (8001 is often taken by Windows there),
   * else 8001.
   *
   * @example
   * ```ts
   * import { SvcPorts } from "@svc/cli";
   * console.log(SvcPorts.getRecommendedLlmPort()); // 8001 outside WSL2
   * ```
   */
  static getRecommendedLlmPort(options: WslDetectionOptions = {}): number {
    return isWsl(options) ? SvcPorts.LLM_WSL_FALLBACK : SvcPorts.LLM_DEFAULT;
  }

  /**
   * LLM ports in preference order (8001 then 8901), as used by the client's `create()` and by
   * `svc llm serve`. A fresh array each call.
   *
   * @example
   * ```ts
   * import { SvcPorts } from "@svc/cli";
   * for (const port of SvcPorts.getLlmPorts()) console.log(port);
   * ```
   */
  static getLlmPorts(): number[] {
    return [SvcPorts.LLM_DEFAULT, SvcPorts.LLM_WSL_FALLBACK];
  }

  /**
   * True when the port can be bound on `host` (default "0.0.0.0", every IPv4 interface) and
   * nothing answers a TCP connect there. The connect catches servers bound with address reuse
   * or on an address the bind test does not cover. Throws `ValidationError` for a port outside
   * 1-65535 and `ConfigurationError` naming `--allow-net` without network permission.
   *
   * @example
   * ```ts
   * import { SvcPorts } from "@svc/cli";
   * if (await SvcPorts.isAvailable(SvcPorts.GATEWAY_DEFAULT, "127.0.0.1")) console.log("free");
   * ```
   */
  static async isAvailable(
    port: number,
    host = "0.0.0.0",
    options: PortCheckOptions = {},
  ): Promise<boolean> {
    checkPort(port);
    const bindHost = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
    if (!canBind(port, bindHost)) return false;
    const listening = await somethingListens(
      port,
      connectHostFor(bindHost),
      options.connectTimeoutMs ?? 500,
    );
    return !listening;
  }

  /** Same as the module-level {@link isWsl}. */
  static isWsl(options: WslDetectionOptions = {}): boolean {
    return isWsl(options);
  }
}

Object.freeze(SvcPorts);
