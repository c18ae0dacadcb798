/**
 * Merging waiting embedding requests into one upstream request, and splitting its answer back.
 * Only requests for one upstream model that agree on everything but `input` and `user` are merged, and only inputs of
 * one shape (texts, or token-id lists), as OpenAI-compatible servers accept.
 *
 * @module
 */
import { ServiceError } from "../core/errors.ts";

/** What batching needs to know about one embedding request. */
export interface EmbeddingBatchInfo {
  /** Requests with equal keys may be merged. */
  key: string;
  /** The inputs as a list (a single string or token list becomes a list of one). */
  inputs: (string | number[])[];
}

/**
 * The batch key and inputs of an embeddings body, or undefined when it cannot be merged.
 *
 * @example
 * ```ts
 * import { embeddingBatchInfo } from "./_embedding_batch.ts";
 * embeddingBatchInfo({ model: "m", input: "hi" })?.inputs; // ["hi"]
 * ```
 */
export function embeddingBatchInfo(
  body: Readonly<Record<string, unknown>>,
): EmbeddingBatchInfo | undefined {
  const input = body.input;
  let inputs: (string | number[])[];
  let shape: "text" | "tokens";
  if (typeof input === "string") {
    inputs = [input];
    shape = "text";
  } else if (Array.isArray(input) && input.length > 0) {
    if (input.every((x) => typeof x === "string")) {
      inputs = input as string[];
      shape = "text";
    } else if (input.every((x) => typeof x === "number")) {
      inputs = [input as number[]];
      shape = "tokens";
    } else if (input.every((x) => Array.isArray(x) && x.every((t) => typeof t === "number"))) {
      inputs = input as number[][];
      shape = "tokens";
    } else return undefined;
  } else return undefined;
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(body).sort()) {
    // `model` is left out: aliases of one model merge; the pool checks the backend's name for it.
    if (k !== "input" && k !== "user" && k !== "priority" && k !== "model") rest[k] = body[k];
  }
  return { key: `${shape}\u0000${JSON.stringify(rest)}`, inputs };
}

/**
 * One body for several requests: the first body's fields with every input concatenated.
 *
 * @example
 * ```ts
 * import { mergeEmbeddingBodies } from "./_embedding_batch.ts";
 * mergeEmbeddingBodies([{ model: "m", input: "a" }, { model: "m", input: ["b", "c"] }]);
 * // { model: "m", input: ["a", "b", "c"] }
 * ```
 */
export function mergeEmbeddingBodies(
  bodies: readonly Readonly<Record<string, unknown>>[],
): Record<string, unknown> {
  const { user: _user, input: _input, ...first } = bodies[0];
  return { ...first, input: bodies.flatMap((b) => embeddingBatchInfo(b)?.inputs ?? []) };
}

/**
 * Splits the answer to a merged request: each request gets its own `data` (indices from 0) and a
 * share of `usage` proportional to the size of its inputs (the shares add up to the total).
 *
 * @example
 * ```ts
 * import { splitEmbeddingResponse } from "./_embedding_batch.ts";
 * const parts = splitEmbeddingResponse(
 *   { object: "list", model: "m", data: [{ index: 0, embedding: [1] }, { index: 1, embedding: [2] }],
 *     usage: { prompt_tokens: 4, total_tokens: 4 } },
 *   [["a"], ["b"]],
 * );
 * ```
 */
export function splitEmbeddingResponse(
  answer: unknown,
  parts: readonly (readonly (string | number[])[])[],
): Record<string, unknown>[] {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const body = answer as { data?: unknown; usage?: Record<string, unknown> } | null;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== total) {
    throw new ServiceError(
      `a backend answered a merged embedding request of ${total} inputs with ` +
        `${Array.isArray(data) ? data.length : "no"} vectors`,
      { code: "backend_error" },
    );
  }
  const byIndex = [...data].sort((a, b) => (a?.index ?? 0) - (b?.index ?? 0));
  const promptTokens = typeof body?.usage?.prompt_tokens === "number"
    ? body.usage.prompt_tokens
    : 0;
  const sizes = parts.map((p) => p.reduce((n, x) => n + x.length, 0));
  const sizeSum = sizes.reduce((a, b) => a + b, 0);
  const out: Record<string, unknown>[] = [];
  let offset = 0;
  let sizeSoFar = 0;
  let tokensGiven = 0;
  parts.forEach((p, i) => {
    // Cumulative rounding: every share is >= 0 and the shares add up to the total exactly.
    sizeSoFar += sizes[i];
    const upTo = Math.round(
      sizeSum === 0
        ? (promptTokens * (i + 1)) / parts.length
        : (promptTokens * sizeSoFar) / sizeSum,
    );
    const tokens = upTo - tokensGiven;
    tokensGiven = upTo;
    out.push({
      ...(body as Record<string, unknown>),
      data: byIndex.slice(offset, offset + p.length).map((d, j) => ({ ...d, index: j })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
    offset += p.length;
  });
  return out;
}
