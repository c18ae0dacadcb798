/**
 * A promise raced against a timer.
 *
 * @module
 */

/**
 * What `promise` settles with, or the error `timedOut` makes once `ms` pass first (the promise's
 * late outcome is then ignored); the timer is cleared either way.
 *
 * @example
 * ```ts
 * import { withTimeout } from "./with_timeout.ts";
 * await withTimeout(Promise.resolve(1), 100, () => new Error("too slow")); // 1
 * ```
 */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  timedOut: () => Error,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
