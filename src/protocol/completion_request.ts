/**
 * `POST /v1/completions` (legacy) request: wire type, zod schema, conversion to the engine's
 * {@link PromptInput}s and {@link SamplingParams}.
 *
 * @module
 */
import { z } from "zod";
import { STRINGS, TOKEN_ID_LISTS, TOKEN_IDS } from "./_token_lists.ts";
import type { PromptInput, SamplingParams } from "../core/inference_types.ts";
import {
  checkSamplingFields,
  continuousUsage,
  toSamplingParams,
  type WireSamplingFields,
} from "./sampling.ts";
import { SAMPLING_SHAPE } from "./_sampling_shape.ts";
import { parseRequest } from "./validate.ts";
import {
  checkGuidedFields,
  GUIDED_FIELDS_SHAPE,
  guidedResponseFormat,
  type WireGuidedFields,
} from "./guided_decoding.ts";
import { RESPONSE_FORMAT_SCHEMA, toResponseFormat, type WireResponseFormat } from "./tools.ts";

/** OpenAI's default `max_tokens` for legacy completions. */
export const COMPLETION_DEFAULT_MAX_TOKENS = 16;

/** A validated legacy completion request. */
export interface CompletionRequest extends WireSamplingFields, WireGuidedFields {
  /** Left out: the engine server's one chat model (vLLM's default: the served model). */
  model?: string | null;
  /** One prompt, several prompts, one token-id prompt or several. */
  prompt: string | string[] | number[] | number[][];
  /** Legacy logprobs: how many alternatives per token (0 = only the chosen token's). */
  logprobs?: number | null;
  echo?: boolean | null;
  suffix?: unknown;
  best_of?: number | null;
  /** vLLM takes chat's `response_format` here too: the text is held to it as on chat. */
  response_format?: WireResponseFormat | null;
  /** vLLM's: false tokenizes text prompts without the tokenizer's special tokens (BOS). */
  add_special_tokens?: boolean | null;
  /** vLLM's scheduling fields: accepted and ignored (one queue, no request ids to honour). */
  priority?: number | null;
  request_id?: string | null;
}

/** zod schema of {@link CompletionRequest}. */
export const COMPLETION_REQUEST_SCHEMA: z.ZodType<CompletionRequest> = z.strictObject({
  ...SAMPLING_SHAPE,
  ...GUIDED_FIELDS_SHAPE,
  // 0 with `echo` answers the prompt alone (with `logprobs`, its log-probabilities), as OpenAI's
  // legacy API and vLLM do; without `echo` there would be nothing to answer.
  max_tokens: z.int().min(0).nullish(),
  model: z.string().min(1).nullish(),
  prompt: z.union([z.string(), STRINGS, TOKEN_IDS, TOKEN_ID_LISTS], {
    error: "expected a string, a list of strings, or token ids",
  }),
  logprobs: z.int().min(0).nullish(),
  echo: z.boolean().nullish(),
  suffix: z.unknown().optional(),
  best_of: z.int().min(1).nullish(),
  add_special_tokens: z.boolean().nullish(),
  response_format: RESPONSE_FORMAT_SCHEMA.nullish(),
  priority: z.int().nullish(),
  request_id: z.string().nullish(),
}).superRefine((req, ctx) => {
  const samplingIssue = checkSamplingFields(req);
  if (samplingIssue) ctx.addIssue({ code: "custom", ...samplingIssue });
  if (req.max_tokens === 0 && req.echo !== true) {
    ctx.addIssue({
      code: "custom",
      path: ["max_tokens"],
      message: "max_tokens 0 generates nothing: it is allowed only with echo (the prompt alone, " +
        "with logprobs its log-probabilities); ask for at least 1",
    });
  }
  if (req.suffix != null && req.suffix !== "") {
    ctx.addIssue({
      code: "custom",
      path: ["suffix"],
      message: "suffix (insertion) is not supported by this server; leave it out",
    });
  }
  if (req.best_of != null && req.best_of !== (req.n ?? 1)) {
    ctx.addIssue({
      code: "custom",
      path: ["best_of"],
      message: "best_of other than n is not supported; leave it out",
    });
  }
});

/**
 * Validates a parsed JSON body as a legacy completion request.
 *
 * @example
 * ```ts
 * import { parseCompletionRequest } from "./completion_request.ts";
 * parseCompletionRequest({ model: "m", prompt: ["a", "b"] }).prompt.length; // 2
 * ```
 */
export function parseCompletionRequest(body: unknown): CompletionRequest {
  const req = parseRequest(COMPLETION_REQUEST_SCHEMA, body);
  checkGuidedFields(req);
  return req;
}

/**
 * One engine prompt per wire prompt, in order (choices are numbered prompt by prompt).
 *
 * @example
 * ```ts
 * import { toPromptInputs } from "./completion_request.ts";
 * toPromptInputs("hi"); // [{ prompt: "hi" }]
 * toPromptInputs([[1, 2], [3]]); // [{ tokenIds: [1, 2] }, { tokenIds: [3] }]
 * ```
 */
export function toPromptInputs(prompt: CompletionRequest["prompt"]): PromptInput[] {
  if (typeof prompt === "string") return [{ prompt }];
  if (prompt.length > 0 && typeof prompt[0] === "number") {
    return [{ tokenIds: prompt as number[] }];
  }
  return (prompt as (string | number[])[]).map((p) =>
    typeof p === "string" ? { prompt: p } : { tokenIds: p }
  );
}

/**
 * The engine's sampling settings for a legacy completion (`max_tokens` defaults to 16 as with
 * OpenAI; `logprobs: k` asks for the chosen token's log-probability and k alternatives;
 * `response_format` or vLLM's guided fields give the response format).
 *
 * @example
 * ```ts
 * import { completionSamplingParams } from "./completion_request.ts";
 * completionSamplingParams({ model: "m", prompt: "x" }); // { maxTokens: 16 }
 * ```
 */
export function completionSamplingParams(req: CompletionRequest): SamplingParams {
  const params = toSamplingParams(req, {
    defaultMaxTokens: COMPLETION_DEFAULT_MAX_TOKENS,
    logprobs: req.logprobs != null,
    topLogprobs: req.logprobs ?? undefined,
  });
  // At most one of them is set (checkGuidedFields refuses both).
  const format = guidedResponseFormat(req, {
    responseFormat: toResponseFormat(req.response_format),
  });
  if (format !== undefined) params.responseFormat = format;
  return params;
}

// Each wire prompt as it is echoed: text, or token ids (decoded by the route).
function echoedPrompts(prompt: CompletionRequest["prompt"]): (string | number[])[] {
  if (typeof prompt === "string") return [prompt];
  if (prompt.length > 0 && typeof prompt[0] === "number") return [prompt as number[]];
  return [...(prompt as (string | number[])[])];
}

/** A legacy completion request in the engine's terms. */
export interface CompletionJob {
  /** Absent: the server's one chat model. */
  model?: string;
  /** One engine prompt per wire prompt; choices are numbered prompt × n. */
  prompts: PromptInput[];
  params: SamplingParams;
  n: number;
  stream: boolean;
  includeUsage: boolean;
  /** Every chunk carries the usage so far (vLLM's `continuous_usage_stats`, with `include_usage`). */
  continuousUsage?: boolean;
  /** Whether responses carry `top_logprobs` (the request asked for `logprobs`, 0 included). */
  withTopLogprobs: boolean;
  /**
   * The prompt of each wire prompt, when each choice's text starts with it (`echo`): its text, or
   * its token ids for the route to decode with the model's tokenizer.
   */
  echo?: (string | number[])[];
  /**
   * `echo` with `logprobs`: each choice's logprobs start with its prompt's tokens (the first
   * with none), up to this many alternatives each.
   */
  echoLogprobs?: number;
}

/**
 * Converts a validated legacy completion request to the engine's terms.
 *
 * @example
 * ```ts
 * import { parseCompletionRequest, toCompletionJob } from "./completion_request.ts";
 * toCompletionJob(parseCompletionRequest({ model: "m", prompt: ["a", "b"] })).prompts.length; // 2
 * ```
 */
export function toCompletionJob(req: CompletionRequest): CompletionJob {
  return {
    ...(req.model == null ? {} : { model: req.model }),
    prompts: toPromptInputs(req.prompt),
    params: completionSamplingParams(req),
    n: req.n ?? 1,
    stream: req.stream === true,
    includeUsage: req.stream === true && req.stream_options?.include_usage === true,
    ...(continuousUsage(req) ? { continuousUsage: true } : {}),
    withTopLogprobs: req.logprobs != null,
    ...(req.echo === true ? { echo: echoedPrompts(req.prompt) } : {}),
    ...(req.echo === true && req.logprobs != null ? { echoLogprobs: req.logprobs } : {}),
  };
}
