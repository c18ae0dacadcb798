/**
 * Routing strategies: which instance gets a request, among the instances that serve its model,
 * are eligible (healthy or not yet probed, circuit letting requests through, not draining) and
 * have a free slot. The caller takes the slot of the instance returned, in the same tick.
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";
import type { Backend } from "./backend.ts";

/** The routing strategies. */
export type RoutingStrategyType = "round_robin" | "least_loaded" | "latency_aware" | "sticky";

/** Every {@link RoutingStrategyType}, for validation and help texts. */
export const ROUTING_STRATEGIES: readonly RoutingStrategyType[] = [
  "round_robin",
  "least_loaded",
  "latency_aware",
  "sticky",
];

/** What a strategy may look at besides the candidates. */
export interface RoutingContext {
  /** Key for `sticky` (the request's user). */
  userKey?: string | null;
}

/** Chooses one instance among candidates (never empty; all have a free slot). */
export interface RoutingStrategy {
  readonly type: string;
  select(candidates: readonly Backend[], context: RoutingContext): Backend;
}

/** Options of {@link createRoutingStrategy}. */
export interface RoutingOptions {
  /** `latency_aware`: every this many picks, refresh the instance measured longest ago (default 16). */
  explorationInterval?: number;
}

/**
 * Creates a routing strategy.
 *
 * - `round_robin`: smooth weighted round-robin (an instance of weight 2 gets twice the requests of
 *   one of weight 1, interleaved rather than in bursts).
 * - `least_loaded`: fewest in flight relative to `maxConcurrency`; ties go to the instance picked
 *   least recently (so idle instances alternate).
 * - `latency_aware`: lowest predicted latency, `EWMA × (1 + inFlight / maxConcurrency)`.
 *   Unmeasured instances are tried first, and every `explorationInterval` picks the instance
 *   measured longest ago is picked, so a once-slow instance gets a new chance.
 * - `sticky`: rendezvous (highest-random-weight) hashing of the user key: the same key goes to the
 *   same instance; adding an instance moves only the keys it wins; a busy or failed instance's
 *   keys go to their second choice. Without a key it acts as `least_loaded`.
 *
 * @example
 * ```ts
 * import { createRoutingStrategy } from "./routing.ts";
 * const strategy = createRoutingStrategy("least_loaded");
 * // const backend = strategy.select(candidates, {});
 * ```
 */
export function createRoutingStrategy(
  type: RoutingStrategyType,
  options: RoutingOptions = {},
): RoutingStrategy {
  switch (type) {
    case "round_robin":
      return new RoundRobin();
    case "least_loaded":
      return new LeastLoaded();
    case "latency_aware":
      return new LatencyAware(options.explorationInterval ?? 16);
    case "sticky":
      return new Sticky();
    default:
      throw new ValidationError(
        `unknown routing strategy '${type}'; use one of ${ROUTING_STRATEGIES.join(", ")}`,
        { param: "routing" },
      );
  }
}

/** Remembers when each instance was last picked, to break ties fairly. */
class PickClock {
  #tick = 0;
  #last = new Map<string, number>();
  lastPick(b: Backend): number {
    return this.#last.get(b.id) ?? -1;
  }
  mark(b: Backend): Backend {
    this.#last.set(b.id, ++this.#tick);
    return b;
  }
}

class RoundRobin implements RoutingStrategy {
  readonly type = "round_robin";
  #current = new Map<string, number>();

  select(candidates: readonly Backend[]): Backend {
    // nginx's smooth weighted round-robin, over the instances that can take the request now.
    let total = 0;
    let best: Backend | undefined;
    let bestValue = -Infinity;
    for (const b of candidates) {
      const value = (this.#current.get(b.id) ?? 0) + b.config.weight;
      this.#current.set(b.id, value);
      total += b.config.weight;
      if (value > bestValue) {
        best = b;
        bestValue = value;
      }
    }
    this.#current.set(best!.id, bestValue - total);
    return best!;
  }
}

class LeastLoaded implements RoutingStrategy {
  readonly type: string = "least_loaded";
  protected clock = new PickClock();

  select(candidates: readonly Backend[], _context?: RoutingContext): Backend {
    let best = candidates[0];
    for (const b of candidates.slice(1)) {
      if (
        b.load < best.load ||
        (b.load === best.load && this.clock.lastPick(b) < this.clock.lastPick(best))
      ) {
        best = b;
      }
    }
    return this.clock.mark(best);
  }
}

class LatencyAware implements RoutingStrategy {
  readonly type = "latency_aware";
  #clock = new PickClock();
  #picks = 0;
  #interval: number;

  constructor(interval: number) {
    this.#interval = Math.max(2, Math.floor(interval));
  }

  select(candidates: readonly Backend[]): Backend {
    this.#picks++;
    const unmeasured = candidates.filter((b) => b.latencySamples === 0);
    if (unmeasured.length > 0) {
      // Explore: at most one probe at a time per unmeasured instance, the least recently tried.
      return this.#clock.mark(minBy(unmeasured, (b) => [b.inFlight, this.#clock.lastPick(b)]));
    }
    if (candidates.length > 1 && this.#picks % this.#interval === 0) {
      return this.#clock.mark(minBy(candidates, (b) => [b.lastSampleAt]));
    }
    return this.#clock.mark(
      minBy(candidates, (b) => [predictedLatency(b), this.#clock.lastPick(b)]),
    );
  }
}

class Sticky extends LeastLoaded {
  override readonly type = "sticky";

  override select(candidates: readonly Backend[], context: RoutingContext): Backend {
    const key = context.userKey;
    if (key === undefined || key === null || key === "") return super.select(candidates);
    return this.clock.mark(minBy(candidates, (b) => [-rendezvousScore(key, b)]));
  }
}

/** `EWMA × (1 + inFlight / maxConcurrency)`: a busy fast instance can lose to an idle slower one. */
export function predictedLatency(b: Backend): number {
  return (b.latencyMs ?? 0) * (1 + b.load);
}

/**
 * Weighted rendezvous score of `key` on instance `b`: `weight / -ln(u)` with `u` a hash of the
 * pair in (0, 1). The highest score wins; it depends only on the key and that one instance.
 */
export function rendezvousScore(key: string, b: Backend): number {
  const u = (hash53(`${key}\u0000${b.id}`) + 0.5) / 2 ** 53;
  return b.config.weight / -Math.log(u);
}

/** Picks the element with the smallest key tuple (compared in order). */
export function minBy<T>(items: readonly T[], key: (item: T) => number[]): T {
  let best = items[0];
  let bestKey = key(best);
  for (const item of items.slice(1)) {
    const k = key(item);
    for (let i = 0; i < k.length; i++) {
      if (k[i] < bestKey[i]) {
        best = item;
        bestKey = k;
        break;
      }
      if (k[i] > bestKey[i]) break;
    }
  }
  return best;
}

// cyrb53: a fast, well-mixed 53-bit string hash (not cryptographic; only spreading matters).
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
