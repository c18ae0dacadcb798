/**
 * The one pause of the project: retries, polls and back-offs all wait through {@link sleep}.
 *
 * @module
 */

/**
 * Resolves after `ms` milliseconds, or at once when `signal` aborts (or has already aborted). It
 * never rejects: a caller that must stop on abort checks `signal.aborted` afterwards and throws
 * its own error, with a message that names what was cancelled.
 *
 * @example
 * ```ts
 * import { sleep } from "./sleep.ts";
 * const ctrl = new AbortController();
 * setTimeout(() => ctrl.abort(), 10);
 * await sleep(60_000, ctrl.signal); // returns after about 10 ms
 * console.log(ctrl.signal.aborted); // true
 * ```
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
  });
}
