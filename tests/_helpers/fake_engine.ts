/**
 * A fake engine for tests of its callers (the HTTP server, the gateway): words are tokens, output
 * is a deterministic function of prompt and seed, and every call, abort and failure is recorded.
 * Its kind is chosen at construction; it has the methods of every kind, and those of another kind
 * fail as a `DeferredEngine`'s do (`invalid_model_kind`). It honours the contract: stop strings
 * cut (and are never emitted), the token limit gives `length`, long prompts throw
 * `ContextLengthError` before anything runs, and an aborted signal stops generation at the next
 * token with a `CancelledError`.
 */
import { CancelledError, ContextLengthError, ValidationError } from "../../src/core/errors.ts";
import { modelKindError } from "../../src/core/model_kind.ts";
import {
  type AdmissionLimits,
  DEFAULT_ADMISSION_LIMITS,
} from "../../src/engine/admission_limits.ts";
import type {
  EmbedEngine,
  EmbedResult,
  EngineEmbedOptions,
  EngineHealth,
  EngineLoadState,
  FinishReason,
  GenerationEngine,
  GenerationEvent,
  GenerationJob,
  GenerationStream,
  ModelInfo,
  ModelKind,
  PromptInput,
  RerankerEngine,
  RerankResult,
  SamplingParams,
  TokenLogprob,
} from "../../src/core/inference_types.ts";

/** Words the fake chat model picks its tokens from. */
export const FAKE_VOCAB: readonly string[] = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliett",
  "kilo",
  "lima",
  "mike",
  "november",
  "oscar",
  "papa",
];

/** Options of {@link FakeEngine}. */
export interface FakeEngineOptions {
  id?: string;
  kind?: ModelKind;
  contextLength?: number;
  /** Vector size of an embedding model (default 8). */
  dimensions?: number;
  state?: EngineLoadState;
  /** Tokens generated before a natural end (`finish_reason: "stop"`); default 8. */
  eosAfter?: number;
  /** Delay before each token, in ms (default 0). */
  tokenDelayMs?: number;
  /** `generate()` rejects with this (before any token). */
  failGenerate?: Error;
  /** The stream throws this after emitting this many tokens. */
  failAfterTokens?: { tokens: number; error: Error };
  /** `embed()` rejects with this. */
  failEmbed?: Error;
  /** Per-request limits the engine reports (the servers' defaults when left out). */
  limits?: Partial<AdmissionLimits>;
}

/** One recorded `generate` call. */
export interface GenerateCall {
  input: PromptInput;
  params: SamplingParams;
  signal?: AbortSignal;
}

/** Default model id of each kind. */
const FAKE_IDS: Readonly<Record<ModelKind, string>> = {
  chat: "fake/chat",
  embedding: "fake/embed",
  rerank: "fake/rerank",
};

/** The fake engine. */
export class FakeEngine implements GenerationEngine, EmbedEngine, RerankerEngine {
  readonly info: ModelInfo;
  readonly options: FakeEngineOptions;
  /** Every generate call, in order. */
  readonly generateCalls: GenerateCall[] = [];
  /** Every embed call, in order. */
  readonly embedCalls: { inputs: (string | number[])[]; options?: EngineEmbedOptions }[] = [];
  /** Generations stopped by their signal. */
  aborted = 0;
  /** Generations that ran to a finish event. */
  completed = 0;
  /** Generations being iterated now. */
  running = 0;
  /** Reported as `stats().queueDepth`. */
  queueDepth = 0;
  /** Reported as `stats().batchSizes`. */
  readonly batchSizes: Map<number, number> = new Map();
  disposed = false;
  #health: EngineHealth;

  constructor(options: FakeEngineOptions = {}) {
    this.options = options;
    const kind = options.kind ?? "chat";
    this.info = {
      id: options.id ?? FAKE_IDS[kind],
      kind,
      contextLength: options.contextLength ?? 64,
      created: 1_700_000_000,
      ownedBy: "tests",
      ...(kind === "embedding" ? { dimensions: options.dimensions ?? 8 } : {}),
      ...(options.limits ? { limits: { ...DEFAULT_ADMISSION_LIMITS, ...options.limits } } : {}),
    };
    this.#health = { state: options.state ?? "ready" };
  }

  /** Changes what `health()` reports. */
  setState(state: EngineLoadState, message?: string): void {
    this.#health = message === undefined ? { state } : { state, message };
  }

  health(): EngineHealth {
    return this.#health;
  }

  /** Scheduling stats, as an engine with a batcher would report them. */
  stats(): { queueDepth: number; running: number; batchSizes: Map<number, number> } {
    return { queueDepth: this.queueDepth, running: this.running, batchSizes: this.batchSizes };
  }

  countTokens(text: string): number {
    return text.split(/\s+/).filter((w) => w !== "").length;
  }

  /** Prompt length in tokens: words, plus one per message for the template. */
  promptTokens(input: PromptInput): number {
    if ("messages" in input) {
      return input.messages.reduce((n, m) => n + 1 + this.countTokens(m.content), 0);
    }
    if ("prompt" in input) return this.countTokens(input.prompt);
    return input.tokenIds.length;
  }

  /** The full text the fake would generate for `input`/`params` without stops or limits. */
  tokensFor(input: PromptInput, params: SamplingParams, count: number): string[] {
    const key = hash(JSON.stringify(input)) + (params.seed ?? 0) * 7919;
    return Array.from({ length: count }, (_, i) => {
      const word = FAKE_VOCAB[Math.abs(key + i * 13 + (params.seed ?? 0) * i) % FAKE_VOCAB.length];
      return i === 0 ? word : ` ${word}`;
    });
  }

  generate(
    input: PromptInput,
    params: SamplingParams,
    signal?: AbortSignal,
  ): Promise<GenerationStream> {
    this.generateCalls.push({ input, params, signal });
    if (this.info.kind !== "chat") return Promise.reject(modelKindError(this.info, "chat"));
    if (this.options.failGenerate) return Promise.reject(this.options.failGenerate);
    const promptTokens = this.promptTokens(input);
    if (promptTokens >= this.info.contextLength) {
      return Promise.reject(
        new ContextLengthError(
          `the prompt has ${promptTokens} tokens but the model's context is ` +
            `${this.info.contextLength}`,
          { param: "messages" },
        ),
      );
    }
    const room = this.info.contextLength - promptTokens;
    const eos = this.options.eosAfter ?? 8;
    const limit = Math.min(params.maxTokens ?? room, room);
    const count = Math.min(eos, limit);
    const tokens = this.tokensFor(input, params, count);
    let finishReason: FinishReason = count < limit || eos === limit ? "stop" : "length";
    // Cut at the first stop string of the whole text (also when it spans tokens).
    const full = tokens.join("");
    let cutAt = full.length;
    for (const s of params.stop ?? []) {
      const at = full.indexOf(s);
      if (at >= 0 && at < cutAt) cutAt = at;
    }
    if (cutAt < full.length) finishReason = "stop";
    // deno-lint-ignore no-this-alias -- the generator method below has its own `this`
    const engine = this;
    const stream = {
      promptTokens,
      async *[Symbol.asyncIterator](): AsyncGenerator<GenerationEvent> {
        engine.running++;
        let emitted = 0;
        let offset = 0;
        try {
          for (const token of tokens) {
            await sleep(engine.options.tokenDelayMs ?? 0, signal);
            const fail = engine.options.failAfterTokens;
            if (fail && emitted >= fail.tokens) throw fail.error;
            if (offset >= cutAt) break;
            const text = token.slice(0, cutAt - offset);
            offset += token.length;
            emitted++;
            yield {
              type: "delta",
              text,
              ...(params.logprobs ? { logprobs: [logprobOf(text, emitted, params)] } : {}),
            };
            if (offset >= cutAt) break;
          }
          engine.completed++;
          yield {
            type: "finish",
            finishReason,
            usage: { promptTokens, completionTokens: emitted },
          };
        } catch (err) {
          if (err instanceof CancelledError) engine.aborted++;
          throw err;
        } finally {
          engine.running--;
        }
      },
    };
    return Promise.resolve(stream);
  }

  /** Starts each job with `generate`; the first refusal refuses the whole request. */
  async generateAll(
    jobs: readonly GenerationJob[],
    signal?: AbortSignal,
  ): Promise<GenerationStream[]> {
    const streams: GenerationStream[] = [];
    for (const job of jobs) streams.push(await this.generate(job.input, job.params, signal));
    return streams;
  }

  embed(inputs: (string | number[])[], options: EngineEmbedOptions = {}): Promise<EmbedResult> {
    this.embedCalls.push({ inputs, options });
    if (this.info.kind !== "embedding") {
      return Promise.reject(modelKindError(this.info, "embedding"));
    }
    if (this.options.failEmbed) return Promise.reject(this.options.failEmbed);
    const size = this.info.dimensions!;
    if (options.dimensions !== undefined && options.dimensions > size) {
      return Promise.reject(
        new ValidationError(`dimensions ${options.dimensions} > ${size}`, { param: "dimensions" }),
      );
    }
    let promptTokens = 0;
    const vectors: Float32Array[] = [];
    for (const [i, input] of inputs.entries()) {
      let tokens = typeof input === "string" ? this.countTokens(input) : input.length;
      if (tokens > this.info.contextLength) {
        if (!options.truncate) {
          return Promise.reject(
            new ContextLengthError(
              `input ${i} has ${tokens} tokens; the model accepts ${this.info.contextLength}`,
              { param: `input.${i}` },
            ),
          );
        }
        tokens = this.info.contextLength;
      }
      promptTokens += tokens;
      vectors.push(fakeVector(input, options.dimensions ?? size, size));
    }
    return Promise.resolve({ vectors, promptTokens });
  }

  /** Scores each document by the share of the query's words it holds. */
  rerank(query: string, documents: string[]): Promise<RerankResult> {
    if (this.info.kind !== "rerank") return Promise.reject(modelKindError(this.info, "rerank"));
    const words = new Set(query.toLowerCase().split(/\s+/).filter((w) => w !== ""));
    const scores = documents.map((d) => {
      const found = new Set(d.toLowerCase().split(/\s+/).filter((w) => words.has(w)));
      return words.size === 0 ? 0 : found.size / words.size;
    });
    const queryTokens = this.countTokens(query);
    const promptTokens = documents.reduce((n, d) => n + queryTokens + this.countTokens(d), 0);
    return Promise.resolve({ scores, promptTokens });
  }

  dispose(): Promise<void> {
    this.disposed = true;
    this.#health = { state: "stopped" };
    return Promise.resolve();
  }
}

/** The vector the fake embeds `input` to: deterministic, unit length, cut to `dims`. */
export function fakeVector(input: string | number[], dims: number, size = dims): Float32Array {
  let state = hash(typeof input === "string" ? input : input.join(","));
  const full = Array.from({ length: size }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  });
  const cut = full.slice(0, dims);
  const norm = Math.hypot(...cut) || 1;
  return new Float32Array(cut.map((v) => v / norm));
}

function logprobOf(text: string, position: number, params: SamplingParams): TokenLogprob {
  const bytes = [...new TextEncoder().encode(text)];
  return {
    token: text,
    logprob: -0.125 * position,
    bytes,
    topLogprobs: FAKE_VOCAB.slice(0, params.topLogprobs ?? 0).map((w, i) => ({
      token: w,
      logprob: -0.5 * (i + 1),
      bytes: [...new TextEncoder().encode(w)],
    })),
  };
}

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Waits `ms` (yielding to the event loop even at 0); rejects with CancelledError on abort. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
