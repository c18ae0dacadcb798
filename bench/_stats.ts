/**
 * Small statistics and formatting helpers shared by the benchmark parts.
 *
 * @module
 */

/**
 * The `p`-th percentile (0..100) of `values`, linearly interpolated; NaN when there are none.
 *
 * @example
 * ```ts
 * percentile([1, 2, 3, 4], 50); // 2.5
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/**
 * The median of `values` (NaN when empty).
 *
 * @example
 * ```ts
 * median([3, 1, 2]); // 2
 * ```
 */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Percentiles of one set of samples. */
export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

/**
 * Count, p50, p95, p99 and mean of `values`.
 *
 * @example
 * ```ts
 * summarize([1, 2, 3]).p50; // 2
 * ```
 */
export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  const mean = n === 0 ? NaN : values.reduce((s, v) => s + v, 0) / n;
  return {
    n,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    mean,
  };
}

/**
 * Median of each numeric field over repeats: `[{a: 1}, {a: 3}, {a: 2}]` gives `{a: 2}`.
 *
 * @example
 * ```ts
 * medianOfFields([{ x: 1 }, { x: 5 }, { x: 2 }]); // { x: 2 }
 * ```
 */
export function medianOfFields<T extends object>(runs: readonly T[]): T {
  const out: Record<string, number> = {};
  for (const key of Object.keys(runs[0] ?? {})) {
    const values = runs.map((r) => (r as Record<string, number>)[key]);
    out[key] = median(values.filter((v) => Number.isFinite(v)));
  }
  return out as T;
}

/**
 * A number for a table: `digits` decimals below 100, none above; "–" for NaN.
 *
 * @example
 * ```ts
 * fmt(1234.5); // "1235"
 * fmt(3.14159, 2); // "3.14"
 * ```
 */
export function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "–";
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(digits);
}

/**
 * A ratio like `0.87x`.
 *
 * @example
 * ```ts
 * ratio(87, 100); // "0.87x"
 * ```
 */
export function ratio(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return "–";
  return `${(a / b).toFixed(2)}x`;
}

/** Milliseconds since `start` (a `performance.now()` value). */
export function since(start: number): number {
  return performance.now() - start;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
