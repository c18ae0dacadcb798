/**
 * The response store without a folder or state store: each entry's JSON in memory, oldest first,
 * and how many entries and bytes each owner has, so its caps are checked without a scan.
 *
 * @module
 */
import type { ResponseCaps } from "../state/state_store.ts";
import type { StoredResponse } from "./stored_response.ts";

/** One entry kept in memory: its JSON, size, when it was stored and by whom. */
export interface MemoryEntry {
  json: string;
  bytes: number;
  at: number;
  owner: string;
}

interface Usage {
  count: number;
  bytes: number;
}

/** Stored responses in memory, under per-owner caps. */
export class MemoryResponses {
  readonly #caps: Required<ResponseCaps>;
  /** The JSON of each entry, oldest first. */
  readonly #entries = new Map<string, MemoryEntry>();
  /** How many entries and bytes each owner has. */
  readonly #usage = new Map<string, Usage>();

  constructor(caps: Required<ResponseCaps>) {
    this.#caps = caps;
  }

  /** The entry `id` of `owner`, unless expired (by when it was stored). */
  read(id: string, owner: string, now: number): StoredResponse | undefined {
    const kept = this.#entries.get(id);
    const live = kept && kept.owner === owner && now - kept.at <= this.#caps.maxAgeMs;
    return live ? JSON.parse(kept.json) : undefined;
  }

  /** Keeps `entry` as `id`, then evicts; false when the id is another owner's. */
  write(id: string, entry: MemoryEntry): boolean {
    const old = this.#entries.get(id);
    // Ids are random: one of another owner is never taken over.
    if (old !== undefined && old.owner !== entry.owner) return false;
    this.#remove(id);
    this.#entries.set(id, entry);
    const usage = this.#usageOf(entry.owner);
    usage.count++;
    usage.bytes += entry.bytes;
    this.#evict(entry.owner, entry.at);
    return true;
  }

  /** Deletes the entry `id` of `owner`; false when there was none (or it is another owner's). */
  delete(id: string, owner: string): boolean {
    return this.#entries.get(id)?.owner === owner && this.#remove(id);
  }

  #usageOf(owner: string): Usage {
    let usage = this.#usage.get(owner);
    if (usage === undefined) this.#usage.set(owner, usage = { count: 0, bytes: 0 });
    return usage;
  }

  #remove(id: string): boolean {
    const kept = this.#entries.get(id);
    if (kept === undefined) return false;
    this.#entries.delete(id);
    const usage = this.#usageOf(kept.owner);
    usage.count--;
    usage.bytes -= kept.bytes;
    if (usage.count === 0) this.#usage.delete(kept.owner);
    return true;
  }

  // Oldest first (insertion order), so the expired ones lead: anyone's expired entries, then
  // `owner`'s oldest while it is over the caps.
  #evict(owner: string, now: number): void {
    for (const [id, kept] of this.#entries) {
      const usage = this.#usageOf(owner);
      const fits = usage.count <= this.#caps.maxEntries && usage.bytes <= this.#caps.maxTotalBytes;
      const expired = now - kept.at > this.#caps.maxAgeMs;
      if (fits && !expired) break;
      if (expired || kept.owner === owner) this.#remove(id);
    }
  }
}
