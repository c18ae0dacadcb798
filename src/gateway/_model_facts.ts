/**
 * What a backend's `/v1/models` says of its models beyond their ids (Svc's extensions): which
 * models rerank, which have random weights; and what a backend knows of them, given when it was
 * discovered or registered and read from its own listing.
 *
 * @module
 */

/** What a backend's `/v1/models` says of its models beyond their ids (Svc's extensions). */
export interface ModelFacts {
  /** Models listed with `kind: "rerank"` (`/v1/rerank`). */
  readonly rerankers: readonly string[];
  /** Models listed with `random_weights: true` (demo models). */
  readonly randomWeights: readonly string[];
}

const NO_FACTS: ModelFacts = { rerankers: [], randomWeights: [] };
/** Tries of `Backend.learnModelFacts` that got no answer before it stops asking. */
export const MAX_FACT_TRIES = 3;

/**
 * The {@link ModelFacts} of a `/v1/models` answer body (`{ data: [{ id, kind, random_weights }] }`);
 * anything else gives none.
 *
 * @example
 * ```ts
 * import { modelFactsOf } from "./backend.ts";
 * modelFactsOf({ data: [{ id: "demo/rerank", kind: "rerank", random_weights: true }] });
 * // { rerankers: ["demo/rerank"], randomWeights: ["demo/rerank"] }
 * ```
 */
export function modelFactsOf(body: unknown): ModelFacts {
  const data = (body as { data?: unknown } | null)?.data;
  const models = (Array.isArray(data) ? data : []).filter((m): m is Record<string, unknown> =>
    typeof m === "object" && m !== null && typeof m.id === "string" && m.id !== ""
  );
  return {
    rerankers: models.filter((m) => m.kind === "rerank").map((m) => m.id as string),
    randomWeights: models.filter((m) => m.random_weights === true).map((m) => m.id as string),
  };
}

/**
 * A backend's {@link ModelFacts}: those given when it was discovered or registered, together with
 * those its own `/v1/models` gave once it was reachable.
 */
export class KnownModelFacts {
  #given: ModelFacts = NO_FACTS;
  /** What its own `/v1/models` said; null until read. */
  #learnt: ModelFacts | null = null;
  #tries = 0;

  /** The given facts with the learnt ones. */
  get facts(): ModelFacts {
    const learnt = this.#learnt;
    if (learnt === null || (learnt.rerankers.length + learnt.randomWeights.length) === 0) {
      return this.#given;
    }
    return {
      rerankers: [...new Set([...this.#given.rerankers, ...learnt.rerankers])],
      randomWeights: [...new Set([...this.#given.randomWeights, ...learnt.randomWeights])],
    };
  }

  /** Replaces the given facts (with a copy). */
  give(facts: ModelFacts): void {
    this.#given = { rerankers: [...facts.rerankers], randomWeights: [...facts.randomWeights] };
  }

  /** Whether its own `/v1/models` was read (or given up on). */
  get learnt(): boolean {
    return this.#learnt !== null;
  }

  /**
   * Reads `/v1/models` with `list` unless it was read: any HTTP answer settles it; a request that
   * got none leaves it for the next call, up to {@link MAX_FACT_TRIES} tries. `current` tells
   * whether the process asked is still the backend's. Resolves whether it settled.
   */
  async learn(
    list: () => Promise<Response>,
    signal: AbortSignal,
    current: () => boolean,
  ): Promise<boolean> {
    if (this.#learnt !== null) return true;
    try {
      if (await this.learnFrom(await list(), signal, current)) return true;
    } catch {
      // Tried again next time.
    }
    if (current() && ++this.#tries >= MAX_FACT_TRIES) {
      this.#learnt = NO_FACTS; // never a request per health round forever
    }
    return this.#learnt !== null;
  }

  /**
   * Learns the facts of a `/v1/models` answer (none from an error or a body that is no listing);
   * false when the body was cut short or the process that answered is no longer `current`.
   */
  async learnFrom(res: Response, signal: AbortSignal, current: () => boolean): Promise<boolean> {
    let facts = NO_FACTS;
    if (res.ok) {
      try {
        facts = modelFactsOf(await res.json());
      } catch {
        if (signal.aborted) return false; // else not JSON: no facts
      }
    } else {
      await res.body?.cancel();
    }
    // An answer of a process replaced meanwhile says nothing of the new one.
    if (!current()) return false;
    this.#learnt = facts;
    return true;
  }

  /** Forgets what the listing said: a new process lists its models again. */
  forget(): void {
    this.#learnt = null;
    this.#tries = 0;
  }
}
