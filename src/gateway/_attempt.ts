/**
 * One attempt of a job on one backend: send, classify the answer (retry elsewhere, pass through,
 * relay a stream, split a merged answer), release the slot with the right outcome exactly once.
 *
 * @module
 */
import { errorMessage, ServiceError, ServiceUnavailableError } from "../core/errors.ts";
import type { Backend, RequestOutcome } from "./backend.ts";
import type { Job, Member } from "./_job.ts";
import { mergeEmbeddingBodies, splitEmbeddingResponse } from "./_embedding_batch.ts";
import { type RelayOutcome, relayStream } from "./_stream_relay.ts";
import { parseErrorBody, retryAfterSeconds } from "../protocol/error_from_response.ts";
import { clientAnswer, upstreamRequest } from "./backend_api.ts";
import { bytesResponse, knownBody } from "../http/http1/known_body.ts";

/** How an attempt ended. */
export type Attempt =
  /** Every member was answered (or has gone away). */
  | { kind: "done" }
  /**
   * Nothing reached a client: try another backend. `retryAfterMs`: it was busy and said when to
   * come back (`Retry-After`).
   */
  | { kind: "retry"; error: Error; retryAfterMs?: number }
  /** A merged request was refused as a whole: send each member on its own. */
  | { kind: "split" };

/** What an attempt reports back to the dispatcher. */
export interface AttemptHooks {
  now: () => number;
  settle: (member: Member, result: Response | unknown) => void;
  release: (outcome: RequestOutcome, latencyMs?: number) => void;
  /** A stream handed to the client has ended (the job is over only then), and how. */
  streamEnded?: (outcome: RelayOutcome) => void;
}

/** Header naming the instance that answered (for debugging and tests). */
export const BACKEND_HEADER = "x-svc-backend";
const ERROR_DETAIL_BYTES = 4096;

/**
 * Runs one attempt. The caller has taken a slot on `backend`; this releases it.
 *
 * @example
 * ```ts
 * // const result = await runAttempt(job, backend, { now, settle, release });
 * ```
 */
export async function runAttempt(
  job: Job,
  backend: Backend,
  hooks: AttemptHooks,
): Promise<Attempt> {
  const members = job.open();
  if (members.length === 0) {
    hooks.release("cancelled");
    return { kind: "done" };
  }
  const model = backend.upstreamModel(job.model) ?? job.model;
  const bodies = members.map((m) => forwardBody(m.body, model));
  const body = bodies.length === 1 ? bodies[0] : mergeEmbeddingBodies(bodies);

  const ctrl = new AbortController();
  const jobSignal = job.controller.signal;
  const onJobAbort = () => ctrl.abort(jobSignal.reason);
  jobSignal.addEventListener("abort", onJobAbort, { once: true });
  if (jobSignal.aborted) onJobAbort();
  const timeoutMs = Math.max(0, Math.min(backend.config.timeoutMs, job.timeoutAt - hooks.now()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort(new DOMException("the backend timed out", "TimeoutError"));
  }, timeoutMs);
  const started = hooks.now();
  let released = false;
  const finish = (outcome: RequestOutcome, latencyMs?: number): void => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    jobSignal.removeEventListener("abort", onJobAbort);
    hooks.release(outcome, latencyMs);
  };
  const failed = (err: Error): Attempt => {
    if (jobSignal.aborted) {
      finish("cancelled");
      return { kind: "done" };
    }
    finish("failure");
    if (timedOut) {
      return {
        kind: "retry",
        error: new ServiceError(
          `The backend '${backend.id}' did not answer within ${timeoutMs} ms; retry later.`,
          { code: "backend_timeout", cause: err },
        ),
      };
    }
    return { kind: "retry", error: err };
  };

  let upstream: { url: string; body: unknown };
  try {
    upstream = upstreamRequest(backend, job.path, body);
  } catch (err) {
    // A request this backend's API cannot take: the client's error, not the backend's.
    finish("success");
    for (const member of members) {
      hooks.settle(member, err);
      member.detach();
    }
    return { kind: "done" };
  }
  let res: Response;
  try {
    res = await backend.send(upstream.url, {
      method: "POST",
      body: JSON.stringify(upstream.body),
      signal: ctrl.signal,
      requestId: job.requestId,
      via: job.via,
    });
  } catch (err) {
    return failed(
      new ServiceError(
        `The backend '${backend.id}' is not reachable (${errorMessage(err)}); retry later.`,
        { code: "backend_unreachable", cause: err },
      ),
    );
  }

  if (!res.ok) {
    // Only what says the backend is broken counts against its circuit: 5xx, and 401/403 (it
    // refuses the gateway's own key, which no client can cause). Busy (429, or 408: it did not
    // read a body the gateway sent whole) is retried elsewhere without counting; any other 4xx
    // is the client's fault and goes back to it as the backend's answer.
    const busy = res.status === 429 || res.status === 408;
    const broken = res.status >= 500 || res.status === 401 || res.status === 403;
    if (busy || broken) {
      const detail = await errorDetail(res);
      if (busy) {
        finish("overloaded");
        const seconds = retryAfter(res);
        const said = retryAfterSeconds(res.headers) !== undefined;
        return {
          kind: "retry",
          ...(said ? { retryAfterMs: seconds * 1000 } : {}),
          error: new ServiceUnavailableError(
            `The backend '${backend.id}' is overloaded (HTTP ${res.status}); retry later.`,
            { code: "backend_overloaded", retryAfterSeconds: seconds },
          ),
        };
      }
      return failed(upstreamError(backend, res, detail));
    }
    if (members.length > 1) {
      await res.body?.cancel();
      finish("success");
      return { kind: "split" };
    }
    let bytes: ArrayBuffer;
    try {
      bytes = await bodyBytes(res);
    } catch (err) {
      return failed(brokenBody(backend, err));
    }
    finish("success");
    answer(members[0], jsonAnswer(bytes, res, backend), hooks);
    return { kind: "done" };
  }

  const isSse = (res.headers.get("content-type") ?? "").includes("text/event-stream");
  if (job.stream && isSse && res.body !== null && members.length === 1) {
    const reader = res.body.getReader();
    let first: ReadableStreamReadResult<Uint8Array>;
    try {
      first = await reader.read();
    } catch (err) {
      reader.cancel().catch(() => {});
      return failed(brokenBody(backend, err));
    }
    if (first.done) {
      return failed(
        new ServiceError(`The backend '${backend.id}' ended the stream before sending anything.`, {
          code: "stream_broken",
        }),
      );
    }
    const member = members[0];
    if (member.settled) {
      ctrl.abort();
      reader.cancel().catch(() => {});
      finish("cancelled");
      return { kind: "done" };
    }
    // Committed: from here the stream is the client's; a break ends it with an error event.
    clearTimeout(timer);
    const latency = hooks.now() - started;
    const stream = relayStream({
      reader,
      first: first.value,
      idleTimeoutMs: backend.config.timeoutMs,
      backendId: backend.id,
      abortUpstream: (reason) => ctrl.abort(reason),
      abortedBy: () => (jobSignal.aborted ? jobSignal.reason ?? "aborted" : undefined),
      onEnd: (outcome) => {
        finish(outcome, outcome === "success" ? latency : undefined);
        member.detach();
        hooks.streamEnded?.(outcome);
      },
    });
    job.streaming = true;
    hooks.settle(member, new Response(stream, { status: 200, headers: sseHeaders(backend) }));
    return { kind: "done" };
  }

  let bytes: ArrayBuffer;
  try {
    bytes = clientAnswer(backend, job.path, await bodyBytes(res));
  } catch (err) {
    return failed(brokenBody(backend, err));
  }
  const latency = hooks.now() - started;
  if (members.length === 1) {
    finish("success", latency);
    answer(members[0], jsonAnswer(bytes, res, backend), hooks);
    return { kind: "done" };
  }
  let parts: Record<string, unknown>[];
  try {
    parts = splitEmbeddingResponse(
      JSON.parse(new TextDecoder().decode(bytes)),
      members.map((m) => m.inputs ?? []),
    );
  } catch (err) {
    return failed(
      new ServiceError(
        `The backend '${backend.id}' gave an unusable answer to a merged embedding request (${
          errorMessage(err)
        }).`,
        { code: "backend_error", cause: err },
      ),
    );
  }
  finish("success", latency);
  const headers = jsonHeaders(res, backend);
  members.forEach((m, i) => answer(m, Response.json(parts[i], { headers }), hooks));
  return { kind: "done" };
}

// The answer's body: taken as it is when it is already in memory (our HTTP client, an engine app in
// this process), else read.
async function bodyBytes(res: Response): Promise<ArrayBuffer> {
  const known = knownBody(res);
  if (known === undefined) return await res.arrayBuffer();
  const whole = known.byteOffset === 0 && known.byteLength === known.buffer.byteLength;
  return (whole ? known : known.slice()).buffer as ArrayBuffer;
}

function answer(member: Member, res: Response, hooks: AttemptHooks): void {
  hooks.settle(member, res);
  member.detach();
}

// The body sent upstream: the backend's own model name; gateway-only fields dropped.
function forwardBody(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const { priority: _priority, ...rest } = body;
  return { ...rest, model };
}

// The backend's answer as bytes the HTTP writer sends without reading a body stream.
function jsonAnswer(bytes: ArrayBuffer, res: Response, backend: Backend): Response {
  return bytesResponse(new Uint8Array(bytes), {
    status: res.status,
    headers: jsonHeaders(res, backend),
  });
}

function jsonHeaders(res: Response, backend: Backend): [string, string][] {
  return [
    ["content-type", res.headers.get("content-type") ?? "application/json"],
    [BACKEND_HEADER, backend.id],
  ];
}

function sseHeaders(backend: Backend): Headers {
  return new Headers({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
    [BACKEND_HEADER]: backend.id,
  });
}

function upstreamError(backend: Backend, res: Response, detail: string): Error {
  const suffix = detail === "" ? "" : `: ${detail.replace(/\.$/, "")}`;
  if (res.status === 401 || res.status === 403) {
    return new ServiceError(
      `The backend '${backend.id}' rejected the gateway's credentials (HTTP ${res.status}); ` +
        "check that backend's apiKey.",
      { code: "backend_auth" },
    );
  }
  if (res.status === 503) {
    return new ServiceUnavailableError(
      `The backend '${backend.id}' is unavailable (HTTP 503${suffix}); retry later.`,
      { code: "backend_unavailable", retryAfterSeconds: retryAfter(res) },
    );
  }
  return new ServiceError(`The backend '${backend.id}' answered HTTP ${res.status}${suffix}.`, {
    code: "backend_error",
  });
}

function brokenBody(backend: Backend, err: unknown): Error {
  return new ServiceError(
    `The connection to backend '${backend.id}' broke while reading its answer (${
      errorMessage(err)
    }).`,
    { code: "backend_unreachable", cause: err },
  );
}

// The upstream's error message (any error body shape, or the text), bounded, for our own message.
async function errorDetail(res: Response): Promise<string> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_DETAIL_BYTES) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A broken error body still leaves the status to go on.
  } finally {
    reader.cancel().catch(() => {});
  }
  const text = new TextDecoder().decode(concat(chunks)).slice(0, ERROR_DETAIL_BYTES);
  return text.trim() === "" ? "" : parseErrorBody(text).message;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

// Bounded to an hour, whole seconds, at least 1: what our own Retry-After then says.
function retryAfter(res: Response): number {
  const seconds = retryAfterSeconds(res.headers);
  return seconds !== undefined && seconds > 0 ? Math.min(3600, Math.ceil(seconds)) : 1;
}
