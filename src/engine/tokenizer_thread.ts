/**
 * A model's tokenizer in workers, for inputs large enough that rendering, encoding or decoding
 * them would stall the server's thread (an 8 MiB prompt took seconds, and every other request
 * waited; at ~5 µs per character here, 64K characters held it ~0.3 s). Small inputs stay on the
 * server's thread, where they cost less than the round trip. Two workers at most: while one works
 * through a huge input, the other takes the rest.
 *
 * @module
 */

import { ServiceError, ValidationError } from "../core/errors.ts";
import { sleep } from "../core/sleep.ts";
import type { EngineTokenizeResult, PromptInput, TokenizeInput } from "../core/inference_types.ts";
import type { ResolvedDevice } from "./runtime.ts";
import { type RenderedPrompt, renderPrompt } from "./chat/prompt.ts";
import type { Tokenizer } from "./load_model.ts";
import {
  detokenizeWith,
  type EncodedPair,
  type EncodedText,
  encodePairs,
  encodeTexts,
  tokenizeWith,
} from "./tokenization.ts";

/**
 * Characters of text (or token ids) from which work goes to a worker: ~80-110 ms of work here. Not
 * less: a worker costs ~130 MiB (its own transformers.js and tokenizer) and ~1 s to start, paid
 * on first use, so ordinary prompts should not need one.
 */
export const OFF_THREAD_FROM = 16 * 1024;

/** Most workers of one tokenizer (each holds its own copy of the tokenizer). */
const MOST_WORKERS = 2;

/** What the worker does. */
export type TokenizerTask =
  | { type: "render"; input: PromptInput; modelId: string }
  | { type: "tokenize"; input: TokenizeInput; modelId: string; options?: { tokenStrs?: boolean } }
  | { type: "detokenize"; ids: number[] }
  | { type: "encode"; texts: string[]; options?: { maxTokens?: number } }
  | { type: "pairs"; query: string; documents: string[]; options?: { maxTokens?: number } };

/** A message to the worker. */
export interface TokenizerRequest {
  id: number;
  folder: string;
  device: ResolvedDevice;
  task: TokenizerTask;
}

/** The worker's answer. */
export interface TokenizerReply {
  id: number;
  result?: unknown;
  error?: { name: string; message: string; param?: string; code?: string };
}

/** Deno's Web Worker (see worker_session.ts for why it is taken at load). */
const WebWorker: typeof Worker = globalThis.Worker;

/** A started worker and the work it has been given. */
interface Helper {
  worker: Worker;
  /** Characters (or ids) of the tasks it has not answered yet: 0 when idle. */
  queued: number;
  pending: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
}

/**
 * One model's tokenizer work: on this thread for small inputs, in workers (started on first use,
 * each with its own copy of the tokenizer) from {@link OFF_THREAD_FROM} characters or ids.
 */
export class TokenizerThread {
  #helpers: Helper[] = [];
  #nextId = 0;
  /** Characters worked on this thread since {@link #turn} last let others run. */
  #hereSinceTurn = 0;
  /** Settles on the next turn of the event loop, once the count above is back to 0. */
  #nextTurn: Promise<void> | undefined;

  constructor(
    readonly tokenizer: Tokenizer,
    readonly folder: string,
    readonly device: ResolvedDevice,
  ) {}

  /** {@link renderPrompt}. */
  async render(input: PromptInput, modelId: string): Promise<RenderedPrompt> {
    const size = inputSize(input);
    if (size < OFF_THREAD_FROM) {
      await this.#turn(size);
      return renderPrompt(this.tokenizer, input, modelId);
    }
    return await this.#run({ type: "render", input, modelId }, size) as RenderedPrompt;
  }

  /** {@link tokenizeWith}. */
  async tokenize(
    input: TokenizeInput,
    modelId: string,
    options?: { tokenStrs?: boolean },
  ): Promise<EngineTokenizeResult> {
    const size = inputSize(input);
    if (size < OFF_THREAD_FROM) {
      await this.#turn(size);
      return tokenizeWith(this.tokenizer, input, modelId, options);
    }
    const task = { type: "tokenize", input, modelId, options } as const;
    return await this.#run(task, size) as EngineTokenizeResult;
  }

  // Before `size` characters of work on this thread: once small inputs add up to what would go
  // to the worker (a request of 33 prompts of 6K characters each, rendered one after the other,
  // or a score request's 1,000 pairs, started at once), let other requests run first, so such a
  // request does not hold the thread all at once. Callers waiting together all wait for the same
  // turn, then as many go on as fit in it.
  async #turn(size: number): Promise<void> {
    while (this.#hereSinceTurn > 0 && this.#hereSinceTurn + size > OFF_THREAD_FROM) {
      await (this.#nextTurn ??= sleep(0).then(() => {
        this.#hereSinceTurn = 0;
        this.#nextTurn = undefined;
      }));
    }
    this.#hereSinceTurn += size;
  }

  /** {@link detokenizeWith}. */
  async detokenize(ids: number[]): Promise<string> {
    if (ids.length < OFF_THREAD_FROM) {
      await this.#turn(ids.length);
      return detokenizeWith(this.tokenizer, ids);
    }
    return await this.#run({ type: "detokenize", ids }, ids.length) as string;
  }

  /** {@link encodePairs}. */
  async pairs(
    query: string,
    documents: string[],
    options: { maxTokens?: number } = {},
  ): Promise<EncodedPair[]> {
    let size = 0;
    for (const d of documents) size += query.length + d.length;
    if (size < OFF_THREAD_FROM) {
      await this.#turn(size);
      return encodePairs(this.tokenizer, query, documents, options);
    }
    return await this.#run({ type: "pairs", query, documents, options }, size) as EncodedPair[];
  }

  /** {@link encodeTexts} of every text: all here or all in the worker. */
  async encodeAll(
    texts: string[],
    options: { maxTokens?: number } = {},
  ): Promise<EncodedText[]> {
    let size = 0;
    for (const text of texts) size += text.length;
    if (size < OFF_THREAD_FROM) {
      await this.#turn(size);
      return encodeTexts(this.tokenizer, texts, options);
    }
    return await this.#run({ type: "encode", texts, options }, size) as EncodedText[];
  }

  /** Stops the workers (a later call starts new ones). */
  release(): void {
    const helpers = this.#helpers.splice(0);
    for (const helper of helpers) {
      helper.worker.terminate();
      for (const p of helper.pending.values()) {
        p.reject(new ServiceError("the tokenizer was released"));
      }
    }
  }

  #run(task: TokenizerTask, size: number): Promise<unknown> {
    const helper = this.#helper();
    const id = this.#nextId++;
    helper.queued += size;
    return new Promise((resolve, reject) => {
      const settled = () => (helper.queued -= size, helper.pending.delete(id));
      helper.pending.set(id, {
        resolve: (v) => (settled(), resolve(v)),
        reject: (e) => (settled(), reject(e)),
      });
      helper.worker.postMessage(
        { id, folder: this.folder, device: this.device, task } satisfies TokenizerRequest,
      );
    });
  }

  /** An idle worker, a new one if there is room, else the one with the least work queued. */
  #helper(): Helper {
    const idle = this.#helpers.find((h) => h.queued === 0);
    if (idle) return idle;
    if (this.#helpers.length < MOST_WORKERS) return this.#start();
    return this.#helpers.reduce((a, b) => b.queued < a.queued ? b : a);
  }

  #start(): Helper {
    const worker = new WebWorker(new URL("./tokenizer_worker.ts", import.meta.url), {
      type: "module",
    });
    const helper: Helper = { worker, queued: 0, pending: new Map() };
    worker.onmessage = ({ data }: MessageEvent<TokenizerReply>) => {
      const pending = helper.pending.get(data.id);
      if (!pending) return;
      if (data.error === undefined) return pending.resolve(data.result);
      const { name, message, param, code } = data.error;
      pending.reject(
        name === "ValidationError"
          ? new ValidationError(message, { param, code })
          : new ServiceError(`tokenizing failed: ${message}`),
      );
    };
    worker.onerror = (event) => {
      event.preventDefault();
      const err = new ServiceError(`the tokenizer worker crashed: ${event.message}`);
      this.#helpers = this.#helpers.filter((h) => h !== helper);
      for (const p of [...helper.pending.values()]) p.reject(err);
    };
    this.#helpers.push(helper);
    return helper;
  }
}

/**
 * What rendering a message costs beyond its own text, in characters: the template's markup around
 * it. Weighed by their text alone, 200,000 empty messages weighed nothing and held the server's
 * thread for 5.7 s.
 */
const MESSAGE_WEIGHT = 32;

/**
 * Characters a prompt or tokenize input makes the tokenizer handle (ids of a token-id prompt):
 * messages with their markup, names and tool calls, tools and template variables. Counting stops
 * at {@link OFF_THREAD_FROM}, so weighing a huge input costs little.
 */
export function inputSize(input: PromptInput | TokenizeInput): number {
  if ("tokenIds" in input) return input.tokenIds.length;
  if ("prompt" in input) return input.prompt.length;
  let size = jsonWeight(input.tools) + jsonWeight(input.templateKwargs);
  for (const m of input.messages) {
    if (size >= OFF_THREAD_FROM) break;
    size += MESSAGE_WEIGHT + m.content.length + (m.name?.length ?? 0) +
      (m.toolCallId?.length ?? 0);
    for (const call of m.toolCalls ?? []) {
      size += MESSAGE_WEIGHT + call.id.length + call.name.length + call.arguments.length;
    }
  }
  return size;
}

// About the length of `value` as JSON (its strings and keys, a few characters per other value),
// counted up to OFF_THREAD_FROM.
function jsonWeight(value: unknown): number {
  let size = 0;
  const stack = [value];
  while (stack.length > 0 && size < OFF_THREAD_FROM) {
    const v = stack.pop();
    if (typeof v === "string") size += v.length + 2;
    else if (typeof v !== "object" || v === null) size += v === undefined ? 0 : 4;
    else {
      for (const key in v) {
        size += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
        if (size >= OFF_THREAD_FROM) break;
      }
    }
  }
  return size;
}
