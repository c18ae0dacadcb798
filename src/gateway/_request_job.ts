/**
 * What the dispatcher (dispatcher.ts) queues for one request: a {@link Job} with the instances it
 * goes to, the backend path, whether it streams, its deadlines and the keys it is merged and
 * routed by, and the request as the job's member, whose promise is the client's answer.
 *
 * @module
 */
import type { BackendKind } from "./backend_config.ts";
import type { SchedulingHints } from "./scheduling.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { DispatchEndpoint, DispatchRequest } from "./dispatcher_types.ts";
import { embeddingBatchInfo } from "./_embedding_batch.ts";
import { prefixAffinityKey } from "./prefix_affinity.ts";
import { Job, type Member } from "./_job.ts";

const PATHS: Record<DispatchEndpoint, string> = {
  chat: "/chat/completions",
  completion: "/completions",
  embedding: "/embeddings",
  rerank: "/rerank",
  tokenize: "/tokenize",
  detokenize: "/detokenize",
};

/** What the job takes from the dispatcher besides the request. */
export interface JobContext {
  /** The job's number (order of arrival). */
  seq: number;
  /** Clock time of arrival in ms. */
  now: number;
  /** The request's scheduling hints (`readSchedulingHints`). */
  hints: SchedulingHints;
  /** The `Via` chain to send upstream (via.ts). */
  via: string;
  /** The dispatcher's settings the deadlines and merging follow. */
  settings: Pick<Dispatcher, "policy" | "sloMs" | "requestTimeoutMs">;
  /** Called when the client's signal aborts (at once when it already has). */
  abort: (member: Member) => void;
}

/** The job of a request, and the answer it resolves (or rejects) for the client. */
export function requestJob(
  request: DispatchRequest,
  context: JobContext,
): { job: Job; answer: Promise<Response> } {
  const { now, hints, settings } = context;
  const timeoutMs = request.timeoutMs ?? settings.requestTimeoutMs;
  const deadlineMs = hints.deadlineMs ??
    (settings.policy.checksDeadlines ? settings.sloMs : timeoutMs);
  const kind: BackendKind = request.backendKind ??
    (request.kind === "embedding" || request.kind === "rerank" ? "embedding" : "llm");
  const stream = request.stream ?? request.body.stream === true;
  const batch = settings.policy.batchEmbeddings && kind === "embedding"
    ? embeddingBatchInfo(request.body)
    : undefined;
  const job = new Job(
    context.seq,
    hints.priority,
    now + Math.min(deadlineMs, timeoutMs),
    request.model,
    kind,
    request.path ?? PATHS[request.kind],
    stream,
    now + timeoutMs,
    hints.userKey,
    batch?.key,
    request.requestId,
    context.via,
    kind === "llm" ? prefixAffinityKey(request.body) : undefined,
  );
  const answer = new Promise<Response>((resolve, reject) => {
    const member: Member = {
      body: request.body,
      inputs: batch?.inputs,
      resolve,
      reject,
      settled: false,
      aborted: false,
      job,
      detach: () => {},
    };
    job.members.push(member);
    const signal = request.signal;
    if (signal !== undefined) {
      const onAbort = () => context.abort(member);
      if (signal.aborted) onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      member.detach = () => signal.removeEventListener("abort", onAbort);
    }
  });
  return { job, answer };
}
