/**
 * The engine contract and the data types both sides of it share: what the protocol layer, the HTTP
 * server, the gateway and the client library see of a model runner (messages, sampling settings,
 * generation events, model info, and the engine interfaces: {@link EngineBase} (what every engine
 * has) and one per model kind, {@link GenerationEngine} (`chat`), {@link EmbedEngine} (`embedding`)
 * and {@link RerankerEngine} (`rerank`), whose union is {@link InferenceEngine}. Types only, no
 * code (the kind check that narrows an engine is src/core/model_kind.ts): `src/protocol/` and
 * `src/engine/` both import it, neither imports the other for these. Implementations live in
 * `src/engine/` (transformers.js).
 *
 * Fields here are camelCase; the OpenAI snake_case wire names live only in `src/protocol/`.
 *
 * @module
 */

/** Per-request limits of an engine. */
export interface AdmissionLimits {
  /** Most prompts in one legacy completions request (`prompt` as a list). */
  maxPrompts: number;
  /** Most choices per prompt (`n`). */
  maxN: number;
  /**
   * Most messages in one chat request (`/v1/chat/completions`, `/tokenize`; the `input` items of
   * `/v1/responses`), counted before the request is validated.
   */
  maxMessages: number;
  /** Most sequences one request starts: prompts × `n`. */
  maxSequences: number;
  /** Most prompt tokens one request has prefilled: the sum over its sequences. */
  maxPromptTokens: number;
  /**
   * Most tokens one request may generate: the sum over its sequences of `max_tokens` (or, unset,
   * of the room its prompt leaves in the context).
   */
  maxGeneratedTokens: number;
  /** Most alternatives per token (`top_logprobs`, legacy `logprobs`). */
  maxTopLogprobs: number;
  /** Most inputs in one embeddings request. */
  maxEmbeddingInputs: number;
  /** Most tokens in one embeddings request, all inputs together. */
  maxEmbeddingTokens: number;
  /** Most documents in one rerank request. */
  maxRerankDocuments: number;
  /** Most tokens in one rerank request, all (query, document) pairs together. */
  maxRerankTokens: number;
}

/** What a model does: generate text, embed texts, or score (query, document) pairs. */
export type ModelKind = "chat" | "embedding" | "rerank";

/** Where the model runs. `auto` resolves to one of the others at load time. */
export type Device = "auto" | "webgpu" | "cpu" | "wasm";

/** One chat message as the engine sees it. */
export interface ChatMessage {
  /** Who wrote the message. */
  role: "system" | "user" | "assistant" | "tool" | "developer";
  /** Its text. */
  content: string;
  /** Name of the participant or tool. */
  name?: string;
  /** The tool call a `tool` message answers. */
  toolCallId?: string;
  /** The tools an assistant turn called. */
  toolCalls?: ToolCall[];
}

/** A function the model may call. */
export interface ToolDefinition {
  /** Function name. */
  name: string;
  /** What it does (for the model). */
  description?: string;
  /** JSON Schema of the arguments object; absent means no arguments. */
  parameters?: Record<string, unknown>;
}

/** A call of a tool, as the model made it. */
export interface ToolCall {
  /** Call id. */
  id: string;
  /** Function name. */
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
}

/** Which tools the model may or must call: none, its own choice, at least one, or this one. */
export type ToolChoice = "none" | "auto" | "required" | { name: string };

/**
 * A format constrained decoding holds the output to: any JSON object, a JSON Schema, text a
 * regular expression matches whole, or exactly one of some strings. `param` is the request field
 * an error about the schema or regex names (default `response_format.json_schema.schema`).
 */
export type ResponseFormat =
  | { type: "json_object"; compact?: boolean }
  | {
    type: "json_schema";
    schema: Record<string, unknown> | boolean;
    param?: string;
    /** No whitespace outside strings (vLLM's `disable_any_whitespace`). */
    compact?: boolean;
    /**
     * Objects with `properties` and no `additionalProperties` allow no other keys (vLLM's
     * `disable_additional_properties`).
     */
    closedObjects?: boolean;
  }
  | { type: "regex"; pattern: string; param?: string }
  | { type: "choice"; choices: string[] };

/** Describes a served model. */
export interface ModelInfo {
  /** The id clients put in `model`. */
  id: string;
  /** What it does. */
  kind: ModelKind;
  /** Longest sequence (prompt + completion for chat, input for embeddings) in tokens. */
  contextLength: number;
  /** Vector size (embedding models only). */
  dimensions?: number;
  /** Unix seconds when the model was loaded. */
  created: number;
  /** Who owns the model, shown in `/v1/models`. */
  ownedBy: string;
  /** True for the generated demo models with random weights. */
  randomWeights?: boolean;
  /** Weight precision loaded (`q8`, `q4f16`, … see `DTYPES`), when known. */
  dtype?: string;
  /** How much one request may ask (the servers check it before calling the engine). */
  limits?: AdmissionLimits;
}

/** Sampling and stopping settings of one generation. Defaults are the engine's. */
export interface SamplingParams {
  /** Most tokens to generate; undefined means up to the context length. */
  maxTokens?: number;
  /** 0 means greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass. */
  topP?: number;
  /** 0 or undefined means no top-k cut. */
  topK?: number;
  /** Same seed, same output. */
  seed?: number;
  /** Strings that end the generation; never emitted. */
  stop?: string[];
  /** OpenAI presence penalty. */
  presencePenalty?: number;
  /** OpenAI frequency penalty. */
  frequencyPenalty?: number;
  /** Multiplicative repetition penalty (1: none). */
  repetitionPenalty?: number;
  /** Return the log-probability of each chosen token. */
  logprobs?: boolean;
  /** How many alternatives (0-20) to return per token; implies logprobs. */
  topLogprobs?: number;
  /** Hold the output to JSON, or to a JSON Schema (constrained decoding). */
  responseFormat?: ResponseFormat;
  /** With tools in the prompt: whether the model may, must, or must not call them. Default auto. */
  toolChoice?: ToolChoice;
  /**
   * The tools the model may call, by name (OpenAI's `allowed_tools`): every tool stays in the
   * prompt, calls are held to these. Unset: all.
   */
  allowedTools?: string[];
  /** May the model call several tools in one turn? Default true. */
  parallelToolCalls?: boolean;
  /** Added to a token's logit before sampling, by token id (OpenAI's `logit_bias`, -100 to 100). */
  logitBias?: Record<number, number>;
  /** Drop tokens less likely than `minP` times the most likely one (0: off). */
  minP?: number;
  /** End-of-sequence tokens (and `stopTokenIds`) are not chosen before this many tokens. */
  minTokens?: number;
  /** Token ids that end the generation like end-of-sequence (kept out of the text). */
  stopTokenIds?: number[];
  /** Go on past end-of-sequence until `maxTokens` (`stopTokenIds` still end it). */
  ignoreEos?: boolean;
  /** Keep the stop string that ended the generation at the end of the text. */
  includeStopStrInOutput?: boolean;
  /** Leave special tokens out of the text (default true). */
  skipSpecialTokens?: boolean;
}

/** A prompt: chat messages (rendered with the model's chat template) or raw text or token ids. */
export type PromptInput =
  | {
    messages: ChatMessage[];
    /** Extra variables for the chat template (`chat_template_kwargs`, e.g. `enable_thinking`). */
    templateKwargs?: Record<string, unknown>;
    /** Functions the model may call (passed to the chat template). */
    tools?: ToolDefinition[];
    /** End with the template's generation prompt (the assistant turn's opening). Default true. */
    addGenerationPrompt?: boolean;
    /** Leave the last (assistant) message open, for the model to go on writing it. */
    continueFinalMessage?: boolean;
  }
  | { prompt: string }
  | { tokenIds: number[] };

/** One generation of a request: a prompt and its sampling settings. */
export interface GenerationJob {
  /** The prompt. */
  input: PromptInput;
  /** How to sample. */
  params: SamplingParams;
}

/** Log-probability of one generated token. */
export interface TokenLogprob {
  /** The token's text. */
  token: string;
  /** Its log-probability. */
  logprob: number;
  /** UTF-8 bytes of the token text. */
  bytes: number[];
  /** The most likely tokens at this step. */
  topLogprobs: { token: string; logprob: number; bytes: number[] }[];
}

/**
 * A prompt token's log-probability given the tokens before it (legacy completions' `echo` with
 * `logprobs`): the first token has none (`logprob` and `topLogprobs` null).
 */
export interface PromptTokenLogprob {
  /** The token's text (special tokens written out). */
  token: string;
  /** Its log-probability given the tokens before it (null for the first token). */
  logprob: number | null;
  /** UTF-8 bytes of the token text. */
  bytes: number[];
  /** The most likely tokens at its position, best first. */
  topLogprobs: { token: string; logprob: number; bytes: number[] }[] | null;
  /**
   * The tokenizer put it around a text prompt's text (a BOS token): its text is not the prompt's,
   * so it takes no place in the echoed text.
   */
  added?: boolean;
}

/** Why a generation ended (`tool_calls`: it stopped after calling tools). */
export type FinishReason = "stop" | "length" | "tool_calls";

/** Token counts of one call. */
export interface Usage {
  /** Tokens of the prompt. */
  promptTokens: number;
  /** Tokens generated. */
  completionTokens: number;
  /** Prompt tokens taken from the prefix cache instead of being prefilled (0 or absent: none). */
  cachedTokens?: number;
}

/** What a generation stream yields. */
export type GenerationEvent =
  | {
    type: "delta";
    /** New text; always whole UTF-8 characters, stop strings removed. */
    text: string;
    /** Log-probabilities of the tokens behind `text`, when asked for. */
    logprobs?: TokenLogprob[];
    /** Tokens this generation has generated so far, this delta's included (where known). */
    completionTokens?: number;
  }
  | { type: "finish"; finishReason: FinishReason; usage: Usage };

/**
 * How a reasoning model (Qwen3, DeepSeek-R1) marks its reasoning in the output, e.g.
 * `<think>…</think>` before the answer.
 */
export interface ReasoningMarkers {
  /** Text that opens the block. */
  start: string;
  /** Text that closes it. */
  end: string;
  /** The prompt ends inside an open reasoning block, so the output starts as reasoning. */
  startsInside: boolean;
}

/** A generation that passed validation and is running. */
export interface GenerationStream extends AsyncIterable<GenerationEvent> {
  /** Prompt length in tokens. */
  readonly promptTokens: number;
  /**
   * Set for chat prompts of models whose vocabulary has reasoning tags: the text of the deltas
   * still holds the tags, and the server splits reasoning from the answer with these.
   */
  readonly reasoning?: ReasoningMarkers;
  /** Set when the model may call tools: how its text marks a call (the server parses them out). */
  readonly toolCalls?: ToolCallFormat;
  /**
   * The function `tool_choice` names, when it names one: a call cut short (`max_tokens`) before
   * its name was written whole still carries it.
   */
  readonly toolName?: string;
}

/**
 * How a model family writes tool calls: each is `start`, a JSON object with the function's `name`
 * and its arguments under `argumentsKey`, then `end`. With no markers (`start` and `end` both "")
 * calls are bare JSON objects at the start of the answer, joined by `separator`.
 */
export interface ToolCallFormat {
  /** Text that opens a call ("" for bare calls). */
  start: string;
  /** Text that closes it ("" for bare calls). */
  end: string;
  /** `arguments` (Hermes, Qwen) or `parameters` (Llama 3.x). */
  argumentsKey: string;
  /** Between calls: optional whitespace for marked calls, `"; "` for bare ones. */
  separator: string;
  /** The calls are one JSON array after `start`, e.g. Mistral's `[TOOL_CALLS] [{...}, {...}]`. */
  list?: boolean;
  /** The key of a JSON call's function name: `name` (the default), `tool_name` (Command-R). */
  nameKey?: string;
  /** For `list`: what comes between `start` and `[` (default an optional space), Command-R's fence. */
  listOpen?: string;
  /** For `list`: what comes after `]`, Command-R's closing fence. */
  listClose?: string;
  /**
   * Calls written name first, then the arguments' JSON (DeepSeek V3/R1, Mistral v11): `start`, then
   * calls `callStart NAME nameEnd ARGS callEnd` joined by `separator`, then `end`.
   */
  nameFirst?: { callStart: string; nameEnd: string; callEnd: string };
  /**
   * The family's markers (`<tool_call>`, `[ARGS]`, `<｜tool▁sep｜>` …): they only ever appear in
   * calls, so text outside calls never contains one (unlike a code fence, also part of some
   * families' markup).
   */
  markers: readonly string[];
}

/** Options of one embedding call to an engine (the client's are `EmbedOptions`). */
export interface EngineEmbedOptions {
  /** Cut vectors to this size and renormalize; must not exceed the model's dimensions. */
  dimensions?: number;
  /** Cut inputs longer than the model accepts instead of failing. */
  truncate?: boolean;
  /**
   * Cut every input to at most this many tokens (at most the model's maximum; vLLM's
   * `truncate_prompt_tokens`), keeping its special tokens. Implies `truncate`.
   */
  truncateTokens?: number;
  /** Which end a cut removes: `right` (default) keeps an input's first tokens, `left` its last. */
  truncationSide?: "left" | "right";
  /** Cancels the request. */
  signal?: AbortSignal;
}

/** Result of one embedding call, in input order. */
export interface EmbedResult {
  /** One vector per input. */
  vectors: Float32Array[];
  /** Tokens of all inputs. */
  promptTokens: number;
}

/** What to tokenize: raw text, or chat messages rendered with the model's chat template. */
export type TokenizeInput =
  | {
    prompt: string;
    /** Add the tokenizer's special tokens (BOS, [CLS]/[SEP]); default true. */
    addSpecialTokens?: boolean;
  }
  | {
    messages: ChatMessage[];
    /** End with the assistant turn's opening, as a chat request does; default true. */
    addGenerationPrompt?: boolean;
    /** Leave the last (assistant) message open, as a chat request may. */
    continueFinalMessage?: boolean;
    tools?: ToolDefinition[];
    templateKwargs?: Record<string, unknown>;
  };

/**
 * Token ids of an input an engine tokenized, and their token strings when asked for (the client's
 * answer is `TokenizeResult`).
 */
export interface EngineTokenizeResult {
  /** The token ids. */
  tokens: number[];
  /** Each token's string, when asked for. */
  tokenStrs?: string[];
}

/** Options of one rerank call to an engine (the client's are `RerankOptions`). */
export interface EngineRerankOptions {
  /** Cut (query, document) pairs longer than the model accepts instead of failing. */
  truncate?: boolean;
  /**
   * Cut every pair to at most this many tokens (at most the model's maximum; vLLM's
   * `truncate_prompt_tokens`), from the document's end. Implies `truncate`.
   */
  truncateTokens?: number;
  /** Return the model's logits rather than scores in [0, 1]. */
  rawScores?: boolean;
  /** Cancels the call. */
  signal?: AbortSignal;
}

/** Result of one rerank call: one score per document, in document order. */
export interface RerankResult {
  /** One score per document, in document order. */
  scores: number[];
  /** Tokens of every (query, document) pair together. */
  promptTokens: number;
}

/** Load state of an engine (a gateway's managed engines have `EngineState`). */
export type EngineLoadState = "loading" | "ready" | "error" | "stopped";

/** Health of an engine. */
export interface EngineHealth {
  /** Loading, ready or failed. */
  state: EngineLoadState;
  /** Why the engine is in `error`, when it is. */
  message?: string;
}

/**
 * What every model runner has, whatever its kind: its info, its health, token counting, its
 * tokenizer (when it has one) and `dispose`. Each kind adds its own work:
 * {@link GenerationEngine}, {@link EmbedEngine}, {@link RerankerEngine}.
 */
export interface EngineBase {
  /** What it serves. */
  readonly info: ModelInfo;
  /** Whether it is ready, and its load. */
  health(): EngineHealth;
  /** Counts tokens of a text (for usage and validation). */
  countTokens(text: string): number;
  /** Tokenizes with the model's tokenizer (`/tokenize`); engines without one leave it out. */
  tokenize?(input: TokenizeInput, options?: { tokenStrs?: boolean }): Promise<EngineTokenizeResult>;
  /** The text of token ids; a `ValidationError` for ids outside the vocabulary. */
  detokenize?(ids: number[]): Promise<string>;
  /** Frees the model; later calls fail. */
  dispose(): Promise<void>;
}

/** Options of {@link GenerationEngine.promptLogprobs}. */
export interface PromptScoringOptions {
  /** Alternatives per position. */
  topLogprobs: number;
  /** How many times each prompt counts against the prompt token limit (`n`). */
  choices?: number;
  /**
   * A generation from each prompt follows (legacy `echo` with `max_tokens` > 0): the prompt's
   * cache is kept for it. Otherwise nothing is kept: a scoring job (an evaluation harness's
   * thousands of prompts) would push other requests' cached prefixes out for nothing.
   */
  generates?: boolean;
  /** Stops the scoring between two model calls. */
  signal?: AbortSignal;
}

/** A runner of a `chat` model: generates text (chat and legacy completions). */
export interface GenerationEngine extends EngineBase {
  /**
   * Validates the prompt (a `ContextLengthError` for one too long, before anything is generated)
   * and starts generating. Aborting `signal` stops the generation within one decode step.
   */
  generate(
    input: PromptInput,
    params: SamplingParams,
    signal?: AbortSignal,
  ): Promise<GenerationStream>;
  /**
   * Starts every generation of one request, or none: all are validated and must fit the queue
   * together. Jobs that share one `input` object (the `n` choices of a prompt) share its
   * rendering.
   */
  generateAll(jobs: readonly GenerationJob[], signal?: AbortSignal): Promise<GenerationStream[]>;
  /**
   * The log-probability of every token of each prompt given those before it, with up to
   * `topLogprobs` alternatives per position (`echo` with `logprobs`). `choices`: how many times
   * each prompt counts against the prompt token limit (`n`). Engines without it refuse echo with
   * logprobs.
   */
  promptLogprobs?(
    inputs: readonly PromptInput[],
    options: PromptScoringOptions,
  ): Promise<PromptTokenLogprob[][]>;
  /**
   * Each prompt's token count, every prompt rendered and checked as a generation's (and counted
   * `choices` times against the prompt token limit), without running the model: what `echo` with
   * `max_tokens: 0` and no `logprobs` needs. Engines without it score the prompts instead.
   */
  checkPrompts?(
    inputs: readonly PromptInput[],
    options?: { choices?: number },
  ): Promise<number[]>;
}

/** A runner of an `embedding` model: turns texts (or token ids) into vectors. */
export interface EmbedEngine extends EngineBase {
  /** Embeds each input (text or token ids). */
  embed(inputs: (string | number[])[], options?: EngineEmbedOptions): Promise<EmbedResult>;
}

/** A runner of a `rerank` model (a cross-encoder): scores documents against a query. */
export interface RerankerEngine extends EngineBase {
  /** Scores each document against the query. */
  rerank(query: string, documents: string[], options?: EngineRerankOptions): Promise<RerankResult>;
}

/**
 * The engine interface of a model kind: `EngineOfKind<"chat">` is {@link GenerationEngine},
 * `EngineOfKind<"embedding">` {@link EmbedEngine}, `EngineOfKind<"rerank">` {@link RerankerEngine};
 * `EngineOfKind<ModelKind>` is any of them. `engineOfKind()` (src/core/model_kind.ts) narrows an
 * engine to it by `info.kind`.
 */
export type EngineOfKind<K extends ModelKind> = K extends "chat" ? GenerationEngine
  : K extends "embedding" ? EmbedEngine
  : RerankerEngine;

/**
 * A model runner of any kind: what servers, registries and the gateway hold. Its `info.kind` says
 * which interface it implements; narrow it with `engineOfKind()` or `isEngineOfKind()`
 * (src/core/model_kind.ts) before calling the methods of its kind.
 */
export type InferenceEngine = GenerationEngine | EmbedEngine | RerankerEngine;
