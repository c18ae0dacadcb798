/**
 * Engine-side metrics: tokens in and out per model, and what an engine reports about its own
 * scheduling (queue depth, running requests, batch sizes) when it exposes `stats()`.
 *
 * @module
 */
import type { EngineBase, Usage } from "../core/inference_types.ts";
import type { EngineRegistry } from "./engine_registry.ts";
import type { Counter, MetricsRegistry } from "../http/metrics.ts";
import type { PrefixCacheStats } from "../engine/chat/prefix_cache.ts";

/**
 * What an engine may report about its scheduling. Optional: an engine that has a `stats()`
 * method returning this feeds the queue and batch metrics.
 */
export interface EngineStats {
  /** Requests waiting to start. */
  queueDepth?: number;
  /** Sequences being generated or embedded now. */
  running?: number;
  /** Every batch run so far, as (batch size, number of batches of that size). */
  batchSizes?: Iterable<readonly [number, number]>;
  /** A chat engine's prefix cache (counters cumulative; bytes and blocks as now). */
  prefixCache?: PrefixCacheStats;
}

/** An engine that reports {@link EngineStats}. */
export interface EngineWithStats {
  stats(): EngineStats;
}

/** Bucket bounds of the batch-size histogram. */
export const BATCH_SIZE_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** Records token usage of one call. */
export type UsageRecorder = (model: string, usage: Usage) => void;

/**
 * Registers the engine metrics of `engines` in `metrics` and returns the usage recorder the
 * routes call.
 *
 * @example
 * ```ts
 * import { EngineRegistry } from "./engine_registry.ts";
 * import { registerEngineMetrics } from "./engine_metrics.ts";
 * import { MetricsRegistry } from "@svc/cli/server";
 * const record = registerEngineMetrics(new MetricsRegistry(), new EngineRegistry([]));
 * record("demo/chat", { promptTokens: 3, completionTokens: 5 });
 * ```
 */
export function registerEngineMetrics(
  metrics: MetricsRegistry,
  engines: EngineRegistry,
  options: { prefix?: string } = {},
): UsageRecorder {
  const p = options.prefix ?? "svc";
  const labelNames = ["model"];
  const prompt = metrics.counter(`${p}_prompt_tokens_total`, "Prompt tokens processed.", {
    labelNames,
  });
  const generated = metrics.counter(`${p}_generation_tokens_total`, "Tokens generated.", {
    labelNames,
  });
  const ready = metrics.gauge(`${p}_engine_ready`, "1 when the model is ready to serve.", {
    labelNames,
  });
  const queue = metrics.gauge(`${p}_engine_queue_depth`, "Requests waiting in the engine.", {
    labelNames,
  });
  const running = metrics.gauge(`${p}_engine_running_requests`, "Requests the engine runs now.", {
    labelNames,
  });
  const batches = metrics.histogram(`${p}_engine_batch_size`, "Sizes of the batches run.", {
    labelNames,
    buckets: BATCH_SIZE_BUCKETS,
  });
  const prefix = prefixCacheMetrics(metrics, p);
  metrics.onCollect(() => {
    for (const engine of engines.engines()) {
      const labels = { model: engine.info.id };
      ready.set(safeHealth(engine) === "ready" ? 1 : 0, labels);
      const stats = readStats(engine);
      if (stats === undefined) continue;
      if (stats.queueDepth !== undefined) queue.set(stats.queueDepth, labels);
      if (stats.running !== undefined) running.set(stats.running, labels);
      if (stats.batchSizes !== undefined) batches.setCounts(stats.batchSizes, labels);
      if (stats.prefixCache !== undefined) prefix(stats.prefixCache, labels);
    }
  });
  return (id, usage) => {
    // Only models served here become label values: a name from a request never does.
    const model = engines.find(id) !== undefined || engines.engines().some((e) => e.info.id === id)
      ? id
      : "other";
    prompt.inc(usage.promptTokens, { model });
    if (usage.completionTokens > 0) generated.inc(usage.completionTokens, { model });
  };
}

function safeHealth(engine: EngineBase): string {
  try {
    return engine.health().state;
  } catch {
    return "error";
  }
}

function readStats(engine: EngineBase): EngineStats | undefined {
  const candidate = engine as EngineBase & Partial<EngineWithStats>;
  return typeof candidate.stats === "function" ? candidate.stats() : undefined;
}

/** The prefix cache's series; returns the function that sets them from an engine's stats. */
function prefixCacheMetrics(
  metrics: MetricsRegistry,
  p: string,
): (stats: PrefixCacheStats, labels: { model: string }) => void {
  const labelNames = ["model"];
  const counter = (name: string, help: string) =>
    metrics.counter(`${p}_prefix_cache_${name}_total`, help, { labelNames });
  const gauge = (name: string, help: string) =>
    metrics.gauge(`${p}_prefix_cache_${name}`, help, { labelNames });
  const lookups = counter("lookups", "Prompts looked up in the prefix cache.");
  const hits = counter("hits", "Prompts that found a cached prefix.");
  const lookupTokens = counter("lookup_tokens", "Prompt tokens looked up in the prefix cache.");
  const hitTokens = counter(
    "hit_tokens",
    "Prompt tokens found in the prefix cache (not prefilled).",
  );
  const evictions = counter("evictions", "Prefix cache blocks evicted to stay within the budget.");
  const bytes = gauge("bytes", "Bytes of key/value cache the prefix cache holds.");
  const budget = gauge("budget_bytes", "Most bytes the prefix cache may hold.");
  const blocks = gauge("blocks", "Blocks the prefix cache holds.");
  // The engine counts from its start; a counter only goes up, by the difference.
  const sync = (c: Counter, value: number, labels: { model: string }) => {
    const delta = value - c.get(labels);
    if (delta > 0) c.inc(delta, labels);
  };
  return (stats, labels) => {
    sync(lookups, stats.lookups, labels);
    sync(hits, stats.hits, labels);
    sync(lookupTokens, stats.lookupTokens, labels);
    sync(hitTokens, stats.hitTokens, labels);
    sync(evictions, stats.evictions, labels);
    bytes.set(stats.bytes, labels);
    budget.set(stats.budgetBytes, labels);
    blocks.set(stats.blocks, labels);
  };
}
