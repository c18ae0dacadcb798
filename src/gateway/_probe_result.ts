/**
 * What one health probe of a backend found (`Backend.probe`), with how it failed, so the health
 * checker can tell a backend that is gone from one that is only slow.
 *
 * @module
 */

/**
 * How a probe failed: the backend `answered` with a status that is not 2xx, `refused` the
 * connection (nothing listens: the process is gone), or gave no answer in time (`timeout`) or at
 * all (`unreachable`: another connection error, e.g. reset or a name that does not resolve).
 */
export type ProbeFailure = "answered" | "refused" | "timeout" | "unreachable";

/** Result of one health probe. */
export interface ProbeResult {
  /** Whether the backend answered healthy. */
  ok: boolean;
  /** HTTP status, when the backend answered. */
  status?: number;
  /** Why the probe failed. */
  message?: string;
  /**
   * How it failed (absent when it passed; also in results other gateway replicas published
   * before they knew it).
   */
  failure?: ProbeFailure;
}

/** The result of an HTTP answer: 2xx is healthy. */
export function probeResultOf(status: number): ProbeResult {
  return status >= 200 && status < 300
    ? { ok: true, status }
    : { ok: false, status, message: `answered HTTP ${status}`, failure: "answered" };
}

/** The result of a probe that got no answer: `signal` aborted is the probe's timeout. */
export function unansweredProbe(err: unknown, signal: AbortSignal): ProbeResult {
  if (signal.aborted) {
    return { ok: false, message: "the health probe timed out", failure: "timeout" };
  }
  const message = `not reachable: ${describe(err)}`;
  return { ok: false, message, failure: refused(err) ? "refused" : "unreachable" };
}

// Our HTTP/1.1 client rejects with Deno's own error; fetch wraps the OS error's text in a cause.
function refused(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof Deno.errors.ConnectionRefused) return true;
    if (/connection refused|ECONNREFUSED/i.test(e.message)) return true;
  }
  return false;
}

// fetch's own message is only "fetch failed": the reason is in its cause.
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : "";
  return cause !== "" && !err.message.includes(cause) ? `${err.message}: ${cause}` : err.message;
}
