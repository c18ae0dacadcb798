/**
 * Core data types with constructors and validators: `Message`, `DataRecord` (the spec's `Record`;
 * renamed so it does not shadow TypeScript's `Record<K, V>`), `Batch` and `InferenceResult`.
 * Validators raise `ValidationError` whose `param` names the bad field.
 *
 * Public API only (the spec's data types, exported from `@svc/cli`): no module of Svc itself uses
 * them; the engine's own types are in `inference_types.ts`.
 *
 * @example
 * ```ts
 * import { createMessage, validateMessage } from "@svc/cli";
 * const msg = createMessage("user-1", { text: "hi" });
 * validateMessage(JSON.parse(JSON.stringify(msg)));
 * ```
 *
 * @module
 */

import { ValidationError } from "./errors.ts";

/** A plain key/value object. */
export type JsonObject = { [key: string]: unknown };

/** A keyed event: `timestamp` is whole milliseconds since the Unix epoch. */
export interface Message {
  /** What the message is about (a user, an order, a stream). */
  key: string;
  /** The payload. */
  value: JsonObject;
  /** Milliseconds since the epoch, a whole number. */
  timestamp: number;
}

/** A unit of data with its metadata (the spec's `Record`). */
export interface DataRecord {
  /** The data itself: any value but `undefined`. */
  data: unknown;
  /** Facts about the data (source, language…). */
  metadata: JsonObject;
}

/** A group of items processed together. `createdAt` is milliseconds since the epoch. */
export interface Batch<T = unknown> {
  /** Unique id of the batch. */
  id: string;
  /** The items, in order. */
  items: T[];
  /** Creation time, milliseconds since the epoch. */
  createdAt: number;
  /** Facts about the batch (model, priority…). */
  metadata: JsonObject;
}

/** Token counts of one inference call. */
export interface InferenceUsage {
  /** Tokens of the input. */
  promptTokens: number;
  /** Tokens generated (0 for embed). */
  completionTokens: number;
  /** promptTokens + completionTokens. */
  totalTokens: number;
}

/** The kinds of inference call. */
export type InferenceKind = "chat" | "generate" | "embed";

/** Why a text generation ended. */
export type InferenceFinishReason = "stop" | "length" | "cancelled" | "error";

/** Fields every {@link InferenceResult} has. */
export interface InferenceResultBase {
  /** The model that answered. */
  model: string;
  /** Token counts. */
  usage: InferenceUsage;
  /** Wall time of the call in milliseconds. */
  latencyMs: number;
}

/** What a chat or generate call returns. */
export interface TextInferenceResult extends InferenceResultBase {
  /** Which call produced it. */
  kind: "chat" | "generate";
  /** The generated text. */
  output: string;
  /** Why generation ended, when known. */
  finishReason?: InferenceFinishReason;
}

/** What an embed call returns: one vector per input. */
export interface EmbedInferenceResult extends InferenceResultBase {
  /** Always `embed`. */
  kind: "embed";
  /** One vector per input, all of the same length. */
  output: number[][];
}

/** What a chat, generate or embed call returns, with usage and latency. */
export type InferenceResult = TextInferenceResult | EmbedInferenceResult;

function fail(type: string, field: string, expected: string, got: unknown): never {
  let shown: string;
  try {
    shown = typeof got === "string" ? JSON.stringify(got) : String(got);
  } catch {
    shown = typeof got;
  }
  if (shown.length > 60) shown = shown.slice(0, 57) + "...";
  throw new ValidationError(`${type}.${field} must be ${expected}, got ${shown}`, { param: field });
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requireObject(value: unknown, type: string): JsonObject {
  if (!isObject(value)) {
    throw new ValidationError(`${type} must be an object, got ${describe(value)}`);
  }
  return value;
}

function describe(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/**
 * Checks that `input` is a valid {@link Message} and returns it typed.
 *
 * @example
 * ```ts
 * validateMessage({ key: "k", value: {}, timestamp: 1 });
 * ```
 */
export function validateMessage(input: unknown): Message {
  const obj = requireObject(input, "Message");
  if (typeof obj.key !== "string" || obj.key.length === 0) {
    fail("Message", "key", "a non-empty string", obj.key);
  }
  if (!isObject(obj.value)) fail("Message", "value", "an object", describe(obj.value));
  if (!isCount(obj.timestamp)) {
    fail("Message", "timestamp", "a non-negative integer (ms since epoch)", obj.timestamp);
  }
  return obj as unknown as Message;
}

/**
 * Builds a validated {@link Message}; `timestamp` defaults to now.
 *
 * @example
 * ```ts
 * createMessage("order-7", { total: 12 }, { timestamp: 1700000000000 });
 * ```
 */
export function createMessage(
  key: string,
  value: JsonObject,
  options: { timestamp?: number } = {},
): Message {
  return validateMessage({ key, value, timestamp: options.timestamp ?? Date.now() });
}

/**
 * Checks that `input` is a valid {@link DataRecord} (`data` anything but undefined, `metadata`
 * an object) and returns it typed.
 *
 * @example
 * ```ts
 * validateRecord({ data: [1, 2], metadata: { source: "csv" } });
 * ```
 */
export function validateRecord(input: unknown): DataRecord {
  const obj = requireObject(input, "Record");
  if (obj.data === undefined) fail("Record", "data", "present (null is allowed)", undefined);
  if (!isObject(obj.metadata)) fail("Record", "metadata", "an object", describe(obj.metadata));
  return obj as unknown as DataRecord;
}

/**
 * Builds a validated {@link DataRecord}; `metadata` defaults to `{}`.
 *
 * @example
 * ```ts
 * createRecord("some text", { lang: "en" });
 * ```
 */
export function createRecord(data: unknown, metadata: JsonObject = {}): DataRecord {
  return validateRecord({ data, metadata });
}

/** Options of {@link createBatch}. */
export interface BatchOptions {
  /** Batch id (default a random UUID). */
  id?: string;
  /** Creation time in ms since epoch (default now). */
  createdAt?: number;
  /** Facts about the batch (default `{}`). */
  metadata?: JsonObject;
}

/**
 * Checks that `input` is a valid {@link Batch}; `validateItem`, when given, checks every item
 * (its errors are re-raised naming `items[i]`).
 *
 * @example
 * ```ts
 * validateBatch({ id: "b1", items: [], createdAt: 0, metadata: {} });
 * ```
 */
export function validateBatch<T = unknown>(
  input: unknown,
  validateItem?: (item: unknown) => T,
): Batch<T> {
  const obj = requireObject(input, "Batch");
  if (typeof obj.id !== "string" || obj.id.length === 0) {
    fail("Batch", "id", "a non-empty string", obj.id);
  }
  if (!Array.isArray(obj.items)) fail("Batch", "items", "an array", describe(obj.items));
  if (!isCount(obj.createdAt)) {
    fail("Batch", "createdAt", "a non-negative integer (ms since epoch)", obj.createdAt);
  }
  if (!isObject(obj.metadata)) fail("Batch", "metadata", "an object", describe(obj.metadata));
  if (validateItem !== undefined) {
    (obj.items as unknown[]).forEach((item, i) => {
      try {
        validateItem(item);
      } catch (err) {
        throw new ValidationError(`Batch.items[${i}] is invalid: ${(err as Error).message}`, {
          param: `items[${i}]`,
          cause: err,
        });
      }
    });
  }
  return obj as unknown as Batch<T>;
}

/**
 * Builds a validated {@link Batch} of `items`.
 *
 * @example
 * ```ts
 * const batch = createBatch(["a", "b"], { metadata: { model: "demo" } });
 * ```
 */
export function createBatch<T>(items: T[], options: BatchOptions = {}): Batch<T> {
  return validateBatch<T>({
    id: options.id ?? crypto.randomUUID(),
    items,
    createdAt: options.createdAt ?? Date.now(),
    metadata: options.metadata ?? {},
  });
}

/**
 * Builds {@link InferenceUsage}; `totalTokens` is the sum.
 *
 * @example
 * ```ts
 * createUsage(12, 30); // { promptTokens: 12, completionTokens: 30, totalTokens: 42 }
 * ```
 */
export function createUsage(promptTokens: number, completionTokens = 0): InferenceUsage {
  return validateUsage({
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
  });
}

function validateUsage(input: unknown): InferenceUsage {
  if (!isObject(input)) fail("InferenceResult", "usage", "an object", describe(input));
  for (const field of ["promptTokens", "completionTokens", "totalTokens"]) {
    if (!isCount(input[field])) {
      fail("InferenceResult", `usage.${field}`, "a non-negative integer", input[field]);
    }
  }
  const usage = input as unknown as InferenceUsage;
  if (usage.totalTokens !== usage.promptTokens + usage.completionTokens) {
    fail(
      "InferenceResult",
      "usage.totalTokens",
      `promptTokens + completionTokens (${usage.promptTokens + usage.completionTokens})`,
      usage.totalTokens,
    );
  }
  return usage;
}

const FINISH_REASONS = ["stop", "length", "cancelled", "error"];

/**
 * Checks that `input` is a valid {@link InferenceResult}: text output for chat/generate, equal-length
 * vectors of finite numbers for embed, consistent usage, non-negative latency.
 *
 * @example
 * ```ts
 * validateInferenceResult({
 *   kind: "embed", model: "m", output: [[0.1, 0.2]], latencyMs: 3,
 *   usage: { promptTokens: 2, completionTokens: 0, totalTokens: 2 },
 * });
 * ```
 */
export function validateInferenceResult(input: unknown): InferenceResult {
  const obj = requireObject(input, "InferenceResult");
  const T = "InferenceResult";
  if (obj.kind !== "chat" && obj.kind !== "generate" && obj.kind !== "embed") {
    fail(T, "kind", "one of chat, generate, embed", obj.kind);
  }
  if (typeof obj.model !== "string" || obj.model.length === 0) {
    fail(T, "model", "a non-empty string", obj.model);
  }
  if (obj.kind === "embed") {
    if (!Array.isArray(obj.output)) fail(T, "output", "an array of vectors", describe(obj.output));
    const vectors = obj.output as unknown[];
    vectors.forEach((vector, i) => {
      if (!Array.isArray(vector) || vector.some((x) => !Number.isFinite(x))) {
        fail(T, `output[${i}]`, "an array of finite numbers", describe(vector));
      }
      if ((vector as number[]).length !== (vectors[0] as number[]).length) {
        fail(T, `output[${i}]`, `of length ${(vectors[0] as number[]).length}`, vector.length);
      }
    });
    if ("finishReason" in obj && obj.finishReason !== undefined) {
      fail(T, "finishReason", "absent for embed results", obj.finishReason);
    }
  } else {
    if (typeof obj.output !== "string") fail(T, "output", "a string", describe(obj.output));
    if (obj.finishReason !== undefined && !FINISH_REASONS.includes(obj.finishReason as string)) {
      fail(T, "finishReason", `one of ${FINISH_REASONS.join(", ")}`, obj.finishReason);
    }
  }
  validateUsage(obj.usage);
  if (typeof obj.latencyMs !== "number" || !(obj.latencyMs >= 0) || !isFinite(obj.latencyMs)) {
    fail(T, "latencyMs", "a non-negative number", obj.latencyMs);
  }
  return obj as unknown as InferenceResult;
}

/** Input of {@link createInferenceResult}: `usage.totalTokens` may be left out. */
export type InferenceResultInit =
  & (
    | Omit<TextInferenceResult, "usage">
    | Omit<EmbedInferenceResult, "usage">
  )
  & { usage: { promptTokens: number; completionTokens?: number; totalTokens?: number } };

/**
 * Builds a validated {@link InferenceResult}, filling `usage.totalTokens` (and a missing
 * `completionTokens`, 0) when left out.
 *
 * @example
 * ```ts
 * createInferenceResult({
 *   kind: "chat", model: "demo", output: "Hello!", finishReason: "stop", latencyMs: 41,
 *   usage: { promptTokens: 9, completionTokens: 3 },
 * });
 * ```
 */
export function createInferenceResult(init: InferenceResultInit): InferenceResult {
  const completionTokens = init.usage?.completionTokens ?? 0;
  const usage = {
    promptTokens: init.usage?.promptTokens,
    completionTokens,
    totalTokens: init.usage?.totalTokens ?? (init.usage?.promptTokens ?? 0) + completionTokens,
  };
  return validateInferenceResult({ ...init, usage });
}
