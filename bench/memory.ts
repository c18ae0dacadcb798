/**
 * Memory under load: peak resident memory (sampled every 50 ms inside each server process) at 32
 * concurrent embedding clients and at 16 chat streams, beside the memory right after loading.
 * The peaks are taken during the embeddings and chat parts; run alone, this part runs just
 * those loads.
 *
 * @module
 */

import type { BenchContext } from "./_context.ts";
import { type ChatResults, runChat } from "./chat.ts";
import { type EmbeddingResults, runEmbeddings } from "./embeddings.ts";

/** Memory of one server configuration, MiB. */
export interface MemoryRow {
  server: string;
  loadedMiB: number;
  /** Peak under the load, per load name. */
  peaks: Record<string, number>;
}

/** What the memory part reports. */
export interface MemoryResults {
  embeddings: MemoryRow[];
  chat: MemoryRow[];
}

/**
 * Collects peak memory from earlier parts' results, running the loads it lacks.
 *
 * @example
 * ```ts
 * const memory = await runMemory(ctx, { embeddings, chat });
 * ```
 */
export async function runMemory(
  ctx: BenchContext,
  prior: { embeddings?: EmbeddingResults; chat?: ChatResults } = {},
): Promise<MemoryResults> {
  const embeddings = prior.embeddings?.concurrencies.includes(32)
    ? prior.embeddings
    : await runEmbeddings(ctx, { concurrencies: [32], raw: false, repeats: 1, llama: false });
  const chat = prior.chat?.streams.includes(16)
    ? prior.chat
    : await runChat(ctx, { streams: [16], repeats: 1, burst: false });
  return {
    embeddings: Object.entries(embeddings.servers).map(([server, byLength]) => ({
      server,
      loadedMiB: embeddings.loadedRssMiB[server],
      peaks: {
        "32 clients, short": byLength.short[32]?.peakRssMiB ?? NaN,
        "32 clients, long": byLength.long[32]?.peakRssMiB ?? NaN,
      },
    })),
    chat: (["on", "off"] as const).map((mode) => ({
      server: `batching ${mode}`,
      loadedMiB: chat.loadedRssMiB[mode],
      peaks: { "16 streams": chat.modes[mode][16]?.peakRssMiB ?? NaN },
    })),
  };
}
