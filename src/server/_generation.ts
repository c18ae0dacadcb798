// Running several generations of one request: start them together, collect them, or merge their
// events in arrival order; map failures caused by an abort to the abort's reason.
import { CancelledError, ServiceError, SvcException } from "../core/errors.ts";
import type {
  FinishReason,
  GenerationEvent,
  GenerationStream,
  InferenceEngine,
  PromptInput,
  SamplingParams,
  TokenLogprob,
  Usage,
} from "../engine/types.ts";

export interface GenerationJob {
  input: PromptInput;
  params: SamplingParams;
}

export interface CollectedGeneration {
  text: string;
  logprobs: TokenLogprob[] | undefined;
  finishReason: FinishReason;
  usage: Usage;
}

/** The error to report when work stopped because `signal` fired (shutdown: a 503). */
export function abortError(signal: AbortSignal): SvcException {
  const reason = signal.reason;
  return reason instanceof SvcException ? reason : new CancelledError();
}

/** The abort of one request: fires when the client/server signal does, or when we abort. */
export class RequestAbort {
  readonly controller: AbortController = new AbortController();
  /** Pass this to the engine. */
  readonly signal: AbortSignal;
  readonly #external: AbortSignal;

  constructor(external: AbortSignal) {
    this.#external = external;
    this.signal = AbortSignal.any([external, this.controller.signal]);
  }

  /** Stops every generation of the request. */
  abort(): void {
    this.controller.abort();
  }

  /** What to throw for `err`: the abort's reason when the client or server aborted, else `err`. */
  explain(err: unknown): unknown {
    return this.#external.aborted ? abortError(this.#external) : err;
  }
}

/** Starts every job; if one fails the others are aborted and the first error is thrown. */
export async function startGenerations(
  engine: InferenceEngine,
  jobs: readonly GenerationJob[],
  abort: RequestAbort,
): Promise<GenerationStream[]> {
  const settled = await Promise.allSettled(
    jobs.map((j) => engine.generate(j.input, j.params, abort.signal)),
  );
  const failed = settled.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    abort.abort();
    throw abort.explain(failed.reason);
  }
  return settled.map((s) => (s as PromiseFulfilledResult<GenerationStream>).value);
}

/** Reads a stream to its end. */
export async function collectGeneration(
  stream: GenerationStream,
  options: { logprobs: boolean },
): Promise<CollectedGeneration> {
  let text = "";
  const logprobs: TokenLogprob[] = [];
  for await (const event of stream) {
    if (event.type === "delta") {
      text += event.text;
      if (event.logprobs) logprobs.push(...event.logprobs);
    } else {
      return {
        text,
        logprobs: options.logprobs ? logprobs : undefined,
        finishReason: event.finishReason,
        usage: event.usage,
      };
    }
  }
  throw new ServiceError("the engine ended a generation without a finish event");
}

/** Collects every stream; the first failure aborts the rest. Errors after an abort say why. */
export async function collectAll(
  streams: readonly GenerationStream[],
  options: { logprobs: boolean; abort: RequestAbort },
): Promise<CollectedGeneration[]> {
  try {
    return await Promise.all(streams.map((s) => collectGeneration(s, options)));
  } catch (err) {
    options.abort.abort();
    throw options.abort.explain(err);
  }
}

/**
 * Yields the events of every stream tagged with its index, as they arrive. Stopping early, or an
 * error in one stream, closes the others.
 */
export async function* mergeGenerations(
  streams: readonly AsyncIterable<GenerationEvent>[],
): AsyncGenerator<{ index: number; event: GenerationEvent }, void, undefined> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  type Pending = Promise<{ index: number; result: IteratorResult<GenerationEvent> }>;
  const pending = new Map<number, Pending>();
  const pull = (index: number) =>
    pending.set(index, iterators[index].next().then((result) => ({ index, result })));
  iterators.forEach((_, i) => pull(i));
  try {
    while (pending.size > 0) {
      const { index, result } = await Promise.race(pending.values());
      if (result.done) {
        pending.delete(index);
      } else {
        pull(index);
        yield { index, event: result.value };
      }
    }
  } finally {
    // Streams still running (an early stop or a failure elsewhere): close them.
    for (const index of pending.keys()) {
      iterators[index].return?.().catch(() => {});
    }
    for (const p of pending.values()) p.catch(() => {});
  }
}
