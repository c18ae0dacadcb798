/**
 * A client of the OpenAI-compatible fine-tuning API (`/files`, `/fine_tuning/jobs`, their
 * events and cancel), and {@link followJob}, which polls a job until it ends.
 *
 * @module
 */

import { CancelledError, isRetryable, ServiceError } from "../core/errors.ts";
import { joinUrl } from "../core/fetch_with_timeout.ts";
import { fetchOrThrow, readJson } from "./_http.ts";
import { sleep } from "../core/sleep.ts";

/** An uploaded file. */
export interface UploadedFile {
  id: string;
  object?: string;
  bytes?: number;
  filename?: string;
  purpose?: string;
  status?: string;
}

/** Status of a fine-tuning job. */
export type FineTuningStatus =
  | "validating_files"
  | "queued"
  | "running"
  | "succeeded"
  | "failed"
  | "cancelled";

/** Statuses after which a job changes no more. */
export const TERMINAL_STATUSES: readonly FineTuningStatus[] = ["succeeded", "failed", "cancelled"];

/** A fine-tuning job, as the API returns it (fields the CLI uses). */
export interface FineTuningJob {
  id: string;
  object?: string;
  model: string;
  status: FineTuningStatus;
  fine_tuned_model: string | null;
  training_file: string;
  validation_file?: string | null;
  created_at?: number;
  finished_at?: number | null;
  trained_tokens?: number | null;
  error?: { code?: string; message?: string; param?: string | null } | null;
  hyperparameters?: Record<string, unknown>;
}

/** One job event. */
export interface FineTuningEvent {
  id: string;
  object?: string;
  created_at: number;
  level?: string;
  message: string;
  type?: string;
  data?: Record<string, unknown> | null;
}

/** The body of `POST /fine_tuning/jobs`. */
export interface CreateJobRequest {
  model: string;
  training_file: string;
  validation_file?: string;
  suffix?: string;
  hyperparameters?: { n_epochs?: number | "auto" };
}

/** Options of {@link FineTuningClient}. */
export interface FineTuningClientOptions {
  /** Base URL ending in the API version, e.g. `https://api.openai.com/v1` (COMPAT_BASE_URL). */
  baseUrl: string;
  /** Bearer key (COMPAT_API_KEY). */
  apiKey?: string;
  /** Per-request timeout for answers; default 60000 ms. */
  timeoutMs?: number;
  /** Replaces `fetch` (tests). */
  fetch?: typeof fetch;
}

/**
 * Calls an OpenAI-compatible fine-tuning API. Failures are our typed errors carrying the
 * provider's message (401 AuthenticationError naming COMPAT_API_KEY, 404 NotFoundError, …).
 *
 * @example
 * ```ts
 * const client = new FineTuningClient({ baseUrl: "https://api.example.com/v1", apiKey: "sk-…" });
 * const file = await client.uploadFile("train.jsonl", await Deno.readFile("train.jsonl"));
 * const job = await client.createJob({ model: "base", training_file: file.id });
 * ```
 */
export class FineTuningClient {
  #options: FineTuningClientOptions;

  /** A client of the API at `options.baseUrl`. */
  constructor(options: FineTuningClientOptions) {
    this.#options = options;
  }

  /** The API base URL. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** `POST /files` (multipart: `purpose`, `file`). */
  uploadFile(
    filename: string,
    content: Uint8Array | string,
    options: { purpose?: string; signal?: AbortSignal } = {},
  ): Promise<UploadedFile> {
    const form = new FormData();
    form.append("purpose", options.purpose ?? "fine-tune");
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    form.append(
      "file",
      new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "application/jsonl" }),
      filename,
    );
    return this.#call<UploadedFile>("POST", "files", { body: form, signal: options.signal });
  }

  /** `POST /fine_tuning/jobs`. */
  createJob(
    request: CreateJobRequest,
    options: { signal?: AbortSignal } = {},
  ): Promise<FineTuningJob> {
    return this.#call<FineTuningJob>("POST", "fine_tuning/jobs", {
      json: request,
      signal: options.signal,
    });
  }

  /** `GET /fine_tuning/jobs/{id}`. */
  getJob(id: string, options: { signal?: AbortSignal } = {}): Promise<FineTuningJob> {
    return this.#call<FineTuningJob>("GET", `fine_tuning/jobs/${encodeURIComponent(id)}`, options);
  }

  /** `GET /fine_tuning/jobs/{id}/events` (newest first, as the API lists them). */
  listEvents(
    id: string,
    options: { after?: string; limit?: number; signal?: AbortSignal } = {},
  ): Promise<{ data: FineTuningEvent[]; has_more?: boolean }> {
    const query = new URLSearchParams();
    if (options.after) query.set("after", options.after);
    if (options.limit) query.set("limit", String(options.limit));
    const q = query.size > 0 ? `?${query}` : "";
    return this.#call("GET", `fine_tuning/jobs/${encodeURIComponent(id)}/events${q}`, options);
  }

  /** `POST /fine_tuning/jobs/{id}/cancel`. */
  cancelJob(id: string): Promise<FineTuningJob> {
    return this.#call<FineTuningJob>("POST", `fine_tuning/jobs/${encodeURIComponent(id)}/cancel`);
  }

  async #call<T>(
    method: string,
    path: string,
    options: { json?: unknown; body?: FormData; signal?: AbortSignal } = {},
  ): Promise<T> {
    const url = joinUrl(this.#options.baseUrl, path);
    const headers: Record<string, string> = {};
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    let body: BodyInit | undefined = options.body;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    }
    const response = await fetchOrThrow(url, { method, headers, body }, {
      what: "the fine-tuning API",
      keyVariable: "COMPAT_API_KEY",
      timeoutMs: this.#options.timeoutMs ?? 60_000,
      signal: options.signal,
      fetch: this.#options.fetch,
    });
    return await readJson<T>(response, `the fine-tuning API (${method} ${url})`);
  }
}

/** Options of {@link followJob}. */
export interface FollowJobOptions {
  /** Ms between polls; default 5000. */
  pollMs?: number;
  /** Stops following (the job itself is not cancelled here): rejects with CancelledError. */
  signal?: AbortSignal;
  /** Each new event, oldest first. */
  onEvent?: (event: FineTuningEvent) => void;
  /** Each status change (and the first status seen). */
  onStatus?: (job: FineTuningJob) => void;
  /** Polls that may fail in a row (network, 5xx, 429) before giving up; default 5. */
  maxFailures?: number;
}

/**
 * Polls `GET /fine_tuning/jobs/{id}` and its events until the job succeeds, fails or is
 * cancelled, reporting new events and status changes; resolves with the final job.
 */
export async function followJob(
  client: FineTuningClient,
  id: string,
  options: FollowJobOptions = {},
): Promise<FineTuningJob> {
  const seen = new Set<string>();
  let lastStatus: string | null = null;
  let failures = 0;
  const pollMs = options.pollMs ?? 5000;
  while (true) {
    if (options.signal?.aborted) throw new CancelledError(`stopped following job ${id}`);
    let job: FineTuningJob;
    try {
      job = await client.getJob(id, { signal: options.signal });
      const events = await client.listEvents(id, { limit: 100, signal: options.signal });
      const fresh = (Array.isArray(events.data) ? events.data : [])
        .filter((e) => !seen.has(e.id))
        .sort((a, b) => a.created_at - b.created_at);
      for (const event of fresh) {
        seen.add(event.id);
        options.onEvent?.(event);
      }
      failures = 0;
    } catch (err) {
      if (err instanceof CancelledError || !isTransient(err)) throw err;
      if (++failures > (options.maxFailures ?? 5)) throw err;
      await sleep(pollMs * failures, options.signal);
      continue;
    }
    if (job.status !== lastStatus) {
      lastStatus = job.status;
      options.onStatus?.(job);
    }
    if (TERMINAL_STATUSES.includes(job.status)) return job;
    await sleep(pollMs, options.signal);
  }
}

// A failed connection or a 5xx from the server (ServiceError), or "come back later" (429, 503).
function isTransient(err: unknown): boolean {
  return err instanceof ServiceError || isRetryable(err);
}
