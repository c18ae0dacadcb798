/**
 * Scheduling policies of the gateway: how waiting work is ordered when every instance is at its
 * `maxConcurrency`, how an instance is chosen, and how pools are split. The rules are written out
 * in `POLICIES.md` beside this file.
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";
import type { Backend } from "./backend.ts";
import type { BackendKind } from "./backend_config.ts";
import {
  createRoutingStrategy,
  minBy,
  type RoutingContext,
  type RoutingStrategy,
  type RoutingStrategyType,
} from "./routing.ts";
import { affineInstance } from "./prefix_affinity.ts";

/** The scheduling policies. `adaptive` is the default. */
export type SchedulingPolicyType =
  | "fifo"
  | "priority"
  | "slo_aware"
  | "cost_optimized"
  | "adaptive"
  | "hybrid";

/** Every {@link SchedulingPolicyType}. */
export const SCHEDULING_POLICIES: readonly SchedulingPolicyType[] = [
  "fifo",
  "priority",
  "slo_aware",
  "cost_optimized",
  "adaptive",
  "hybrid",
];

/** The policy used when none is configured. */
export const DEFAULT_SCHEDULING_POLICY: SchedulingPolicyType = "adaptive";

/** Header carrying a request's priority (an integer, higher first). Body field: `priority`. */
export const PRIORITY_HEADER = "x-priority";
/** Header carrying a request's deadline as milliseconds from its arrival. */
export const DEADLINE_HEADER = "x-deadline-ms";
/** Header carrying the key for sticky routing. Body field: `user`. */
export const USER_KEY_HEADER = "x-user-id";

/** What a policy orders waiting work by. */
export interface WorkTicket {
  /** Arrival order (smaller is older). */
  readonly seq: number;
  /** Higher goes first under `priority`, `adaptive` and `hybrid`. */
  readonly priority: number;
  /** Clock time (ms) by which the work must start; `slo_aware` orders by it. */
  readonly deadline: number;
}

/** What a policy may look at when choosing an instance. */
export interface SelectContext extends RoutingContext {
  /** In flight / capacity over every eligible instance that serves the model (0-1). */
  utilization: number;
  /** The head of the prompt, for prefix affinity (prefix_affinity.ts); chat and completions only. */
  prefixKey?: string;
}

/** A scheduling policy. */
export interface SchedulingPolicy {
  /** Which policy this is. */
  readonly type: SchedulingPolicyType;
  /** Negative when `a` should be served before `b`. */
  compare(a: WorkTicket, b: WorkTicket): number;
  /** Chooses among candidates that all have a free slot (never empty). */
  select(candidates: readonly Backend[], context: SelectContext): Backend;
  /** The pool (wait queue) a kind of request waits in. */
  poolOf(kind: BackendKind): string;
  /** Merge waiting embedding requests for one model into one upstream request. */
  readonly batchEmbeddings: boolean;
  /** Refuse at admission work whose deadline cannot be met. */
  readonly checksDeadlines: boolean;
}

/** Options of {@link createSchedulingPolicy}. */
export interface SchedulingOptions {
  /**
   * Routing strategy for `fifo`, `priority`, `slo_aware`, `adaptive` and `hybrid`. Default:
   * `least_loaded` for the first three; the adaptive switch for the other two.
   */
  routing?: RoutingStrategyType;
  /** `adaptive`/`hybrid`: utilization (0-1) from which latency-aware routing is used (default 0.5). */
  adaptiveThreshold?: number;
  /** See `RoutingOptions.explorationInterval`. */
  explorationInterval?: number;
}

/**
 * Creates a scheduling policy.
 *
 * @example
 * ```ts
 * import { createSchedulingPolicy } from "./scheduling.ts";
 * const policy = createSchedulingPolicy("priority");
 * policy.compare({ seq: 1, priority: 0, deadline: 0 }, { seq: 2, priority: 5, deadline: 0 }); // > 0
 * ```
 */
export function createSchedulingPolicy(
  type: SchedulingPolicyType,
  options: SchedulingOptions = {},
): SchedulingPolicy {
  const made = basePolicy(type, options);
  // Price and locality come first under cost_optimized, and the user key under sticky routing.
  if (type === "cost_optimized" || options.routing === "sticky") return made;
  return { ...made, select: withPrefixAffinity(made.select) };
}

function basePolicy(type: SchedulingPolicyType, options: SchedulingOptions): SchedulingPolicy {
  const routing = (fallback: RoutingStrategyType): RoutingStrategy =>
    createRoutingStrategy(options.routing ?? fallback, {
      explorationInterval: options.explorationInterval,
    });
  const adaptive = (): Selector =>
    options.routing !== undefined ? byStrategy(routing("least_loaded")) : adaptiveSelector(options);
  switch (type) {
    case "fifo":
      return policy(type, byArrival, byStrategy(routing("least_loaded")));
    case "priority":
      return policy(type, byPriority, byStrategy(routing("least_loaded")));
    case "slo_aware":
      return policy(type, byDeadline, byStrategy(routing("least_loaded")), {
        checksDeadlines: true,
      });
    case "cost_optimized":
      return policy(type, byArrival, cheapestSelector());
    case "adaptive":
      return policy(type, byPriority, adaptive());
    case "hybrid":
      return policy(type, byPriority, adaptive(), { byKind: true, batchEmbeddings: true });
    default:
      throw new ValidationError(
        `unknown scheduling policy '${type}'; use one of ${SCHEDULING_POLICIES.join(", ")}`,
        { param: "policy" },
      );
  }
}

type Selector = (candidates: readonly Backend[], context: SelectContext) => Backend;

function policy(
  type: SchedulingPolicyType,
  compare: (a: WorkTicket, b: WorkTicket) => number,
  select: Selector,
  flags: { byKind?: boolean; batchEmbeddings?: boolean; checksDeadlines?: boolean } = {},
): SchedulingPolicy {
  return {
    type,
    compare,
    select,
    poolOf: (kind) => (flags.byKind ? kind : "all"),
    batchEmbeddings: flags.batchEmbeddings ?? false,
    checksDeadlines: flags.checksDeadlines ?? false,
  };
}

const byArrival = (a: WorkTicket, b: WorkTicket): number => a.seq - b.seq;
const byPriority = (a: WorkTicket, b: WorkTicket): number =>
  b.priority - a.priority || a.seq - b.seq;
const byDeadline = (a: WorkTicket, b: WorkTicket): number =>
  a.deadline - b.deadline || a.seq - b.seq;

// The instance that most likely holds the prompt's prefix cache, unless it is busy.
function withPrefixAffinity(select: Selector): Selector {
  return (candidates, context) => {
    if (context.prefixKey === undefined || candidates.length < 2) {
      return select(candidates, context);
    }
    return affineInstance(candidates, context.prefixKey) ?? select(candidates, context);
  };
}

function byStrategy(strategy: RoutingStrategy): Selector {
  return (candidates, context) => strategy.select(candidates, context);
}

// Local first, then the lowest price, then the least loaded; ties rotate.
function cheapestSelector(): Selector {
  let tick = 0;
  const last = new Map<string, number>();
  return (candidates) => {
    const chosen = minBy(candidates, (b) => [
      b.config.local ? 0 : 1,
      b.config.cost,
      b.load,
      last.get(b.id) ?? -1,
    ]);
    last.set(chosen.id, ++tick);
    return chosen;
  };
}

// Below the threshold, spread the load (every instance stays measured); at or above it, send work
// where it is predicted to finish soonest.
function adaptiveSelector(options: SchedulingOptions): Selector {
  const threshold = options.adaptiveThreshold ?? 0.5;
  const low = createRoutingStrategy("least_loaded");
  const high = createRoutingStrategy("latency_aware", {
    explorationInterval: options.explorationInterval,
  });
  return (candidates, context) =>
    context.utilization < threshold
      ? low.select(candidates, context)
      : high.select(candidates, context);
}

/** Scheduling hints read from one request. */
export interface SchedulingHints {
  /** Integer, default 0; higher first. */
  priority: number;
  /** Deadline in ms from arrival, when the request set one. */
  deadlineMs?: number;
  /** Key for sticky routing, when there is one. */
  userKey?: string;
}

/**
 * Reads priority (`x-priority` header, else body `priority`), deadline (`x-deadline-ms`) and the
 * sticky key (`x-user-id` header, else body `user`) of a request. Malformed values are a
 * {@link ValidationError} naming the header or field.
 *
 * @example
 * ```ts
 * import { readSchedulingHints } from "./scheduling.ts";
 * const hints = readSchedulingHints(new Headers({ "x-priority": "5" }), { user: "u1" });
 * // { priority: 5, userKey: "u1" }
 * ```
 */
export function readSchedulingHints(
  headers: Headers | undefined,
  body: Readonly<Record<string, unknown>> | undefined,
): SchedulingHints {
  const hints: SchedulingHints = { priority: 0 };
  const headerPriority = headers?.get(PRIORITY_HEADER);
  if (headerPriority !== null && headerPriority !== undefined) {
    hints.priority = checkPriority(Number(headerPriority.trim() || NaN), PRIORITY_HEADER);
  } else if (body?.priority !== undefined && body.priority !== null) {
    hints.priority = checkPriority(body.priority, "priority");
  }
  const deadline = headers?.get(DEADLINE_HEADER);
  if (deadline !== null && deadline !== undefined) {
    const ms = Number(deadline.trim() || NaN);
    if (!Number.isFinite(ms) || ms <= 0 || ms > 86_400_000) {
      throw new ValidationError(
        `header ${DEADLINE_HEADER} must be a number of milliseconds between 1 and 86400000`,
        { param: DEADLINE_HEADER },
      );
    }
    hints.deadlineMs = ms;
  }
  const user = headers?.get(USER_KEY_HEADER) ?? (typeof body?.user === "string" ? body.user : null);
  if (user !== null && user !== "") hints.userKey = user;
  return hints;
}

function checkPriority(value: unknown, param: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || Math.abs(value) > 1_000_000) {
    throw new ValidationError(`${param} must be an integer between -1000000 and 1000000`, {
      param,
    });
  }
  return value;
}
