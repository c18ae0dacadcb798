/**
 * The coordinator of a single gateway process: everything in memory (coordinator.ts).
 *
 * @module
 */

import {
  type Coordinator,
  decide,
  type Lease,
  type RateDecision,
  type RateLimit,
  rateWindow,
} from "./coordinator.ts";

/** In-process coordination; `now` is injectable for tests. */
export class LocalCoordinator implements Coordinator {
  readonly kind = "local";
  #now: () => number;
  #rates = new Map<string, { start: number; requests: number; tokens: number }>();
  #slots = new Map<string, number>();
  #expiring = new Map<string, { value: string; until: number }>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Memory is always there. */
  unavailable(): null {
    return null;
  }

  admit(key: string, limit: RateLimit): Promise<RateDecision> {
    const used = this.#window(key);
    const decision = decide(limit, used, rateWindow(this.#now()).resetMs);
    if (decision.allowed) used.requests++;
    return Promise.resolve(decision);
  }

  charge(key: string, tokens: number): Promise<void> {
    this.#window(key).tokens += tokens;
    return Promise.resolve();
  }

  acquire(resource: string, max: number): Promise<Lease | null> {
    const held = this.#slots.get(resource) ?? 0;
    if (held >= max) return Promise.resolve(null);
    this.#slots.set(resource, held + 1);
    let released = false;
    return Promise.resolve({
      release: () => {
        if (!released) {
          released = true;
          this.#slots.set(resource, (this.#slots.get(resource) ?? 1) - 1);
        }
        return Promise.resolve();
      },
    });
  }

  claim(name: string, ttlMs: number): Promise<boolean> {
    if (this.#live(name) !== null) return Promise.resolve(false);
    this.#expiring.set(name, { value: "1", until: this.#now() + ttlMs });
    return Promise.resolve(true);
  }

  release(name: string): Promise<void> {
    this.#expiring.delete(name);
    return Promise.resolve();
  }

  put(name: string, value: string, ttlMs: number): Promise<void> {
    this.#expiring.set(name, { value, until: this.#now() + ttlMs });
    return Promise.resolve();
  }

  get(name: string): Promise<string | null> {
    return Promise.resolve(this.#live(name));
  }

  heartbeat(id: string, ttlMs: number): Promise<void> {
    return this.put(`member:${id}`, id, ttlMs);
  }

  members(): Promise<string[]> {
    const ids = [...this.#expiring.keys()].filter((k) => k.startsWith("member:"));
    return Promise.resolve(ids.flatMap((k) => this.#live(k) ?? []));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #window(key: string): { start: number; requests: number; tokens: number } {
    const { start } = rateWindow(this.#now());
    let w = this.#rates.get(key);
    if (w === undefined || w.start !== start) {
      w = { start, requests: 0, tokens: 0 };
      this.#rates.set(key, w);
    }
    return w;
  }

  #live(name: string): string | null {
    const entry = this.#expiring.get(name);
    if (entry === undefined) return null;
    if (entry.until > this.#now()) return entry.value;
    this.#expiring.delete(name);
    return null;
  }
}
