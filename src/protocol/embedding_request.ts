/**
 * `POST /v1/embeddings` request: wire type, zod schema, conversion to the engine's inputs and
 * {@link EngineEmbedOptions}.
 *
 * @module
 */
import { z } from "zod";
import { STRINGS, TOKEN_ID_LISTS, TOKEN_IDS } from "./_token_lists.ts";
import type { EngineEmbedOptions } from "../core/inference_types.ts";
import { parseRequest } from "./validate.ts";
import { ValidationError } from "../core/errors.ts";
import { TRUNCATION_SCHEMA_FIELDS, type TruncationFields, truncationOf } from "./truncation.ts";

/** How vectors are sent back. */
export type EncodingFormat = "float" | "base64";

/** A validated embeddings request. */
export interface EmbeddingRequest extends TruncationFields {
  /** Left out: the engine server's one embedding model (vLLM's default: the served model). */
  model?: string | null;
  input: string | string[] | number[] | number[][];
  encoding_format?: EncodingFormat | null;
  dimensions?: number | null;
  user?: string | null;
  /** vLLM's: false tokenizes text inputs without the tokenizer's special tokens ([CLS], [SEP]). */
  add_special_tokens?: boolean | null;
  /** vLLM's scheduling fields: accepted and ignored (one queue, no request ids to honour). */
  priority?: number | null;
  request_id?: string | null;
}

/** zod schema of {@link EmbeddingRequest}. */
export const EMBEDDING_REQUEST_SCHEMA: z.ZodType<EmbeddingRequest> = z.strictObject({
  model: z.string().min(1).nullish(),
  input: z.union([z.string(), STRINGS, TOKEN_IDS, TOKEN_ID_LISTS], {
    error: "expected a string, a list of strings, or token ids",
  }),
  encoding_format: z.enum(["float", "base64"]).nullish(),
  dimensions: z.int().min(1).nullish(),
  user: z.string().nullish(),
  ...TRUNCATION_SCHEMA_FIELDS,
  add_special_tokens: z.boolean().nullish(),
  priority: z.int().nullish(),
  request_id: z.string().nullish(),
});

/**
 * Validates a parsed JSON body as an embeddings request.
 *
 * @example
 * ```ts
 * import { parseEmbeddingRequest } from "./embedding_request.ts";
 * parseEmbeddingRequest({ model: "m", input: "hi" }).input; // "hi"
 * ```
 */
export function parseEmbeddingRequest(body: unknown): EmbeddingRequest {
  return parseRequest(EMBEDDING_REQUEST_SCHEMA, body);
}

/**
 * The engine's inputs, in order: texts stay texts, token-id lists stay lists.
 *
 * @example
 * ```ts
 * import { toEmbedInputs } from "./embedding_request.ts";
 * toEmbedInputs([1, 2, 3]); // [[1, 2, 3]]
 * ```
 */
export function toEmbedInputs(input: EmbeddingRequest["input"]): (string | number[])[] {
  if (typeof input === "string") return [input];
  if (input.length > 0 && typeof input[0] === "number") return [input as number[]];
  return [...(input as (string | number[])[])];
}

/**
 * The engine's embedding options. `dimensions` above the model's size is a 400 (named here, so
 * the message is the same for every engine), and so is a `truncate_prompt_tokens` above the model's
 * maximum.
 *
 * @example
 * ```ts
 * import { toEmbedOptions } from "./embedding_request.ts";
 * toEmbedOptions({ model: "m", input: "x", truncate: true }, { dimensions: 384, maxTokens: 512 });
 * // { truncate: true }
 * ```
 */
export function toEmbedOptions(
  req: EmbeddingRequest,
  model: { id?: string; dimensions?: number; maxTokens: number },
): EngineEmbedOptions {
  const options: EngineEmbedOptions = {};
  if (req.dimensions != null) {
    if (model.dimensions !== undefined && req.dimensions > model.dimensions) {
      throw new ValidationError(
        `dimensions is ${req.dimensions} but model '${model.id ?? req.model}' makes vectors of ` +
          `${model.dimensions}; ask for ${model.dimensions} or fewer`,
        { param: "dimensions", code: "invalid_value" },
      );
    }
    options.dimensions = req.dimensions;
  }
  return { ...options, ...truncationOf(req, model.maxTokens) };
}

/** An embeddings request in the engine's terms. */
export interface EmbeddingJob {
  inputs: (string | number[])[];
  options: EngineEmbedOptions;
  encodingFormat: EncodingFormat;
}

/**
 * Converts a validated embeddings request, for a model of the given size and maximum length,
 * to the engine's terms (throws like {@link toEmbedOptions}).
 *
 * @example
 * ```ts
 * import { parseEmbeddingRequest, toEmbeddingJob } from "./embedding_request.ts";
 * const req = parseEmbeddingRequest({ model: "m", input: ["a"], encoding_format: "base64" });
 * toEmbeddingJob(req, { dimensions: 384, maxTokens: 512 }).encodingFormat; // "base64"
 * ```
 */
export function toEmbeddingJob(
  req: EmbeddingRequest,
  model: { id?: string; dimensions?: number; maxTokens: number },
): EmbeddingJob {
  return {
    inputs: toEmbedInputs(req.input),
    options: toEmbedOptions(req, model),
    encodingFormat: req.encoding_format ?? "float",
  };
}
