/**
 * A small HTTP client for the model hub's file layout: the listing API
 * (`{endpoint}/api/models/{repo}/revision/{revision}`) and file downloads
 * (`{endpoint}/{repo}/resolve/{revision}/{path}`), with `Range` requests, redirects, the
 * bearer token, and hub answers turned into our error classes.
 *
 * @module
 */

import {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  isAccessRefused,
  NotFoundError,
  ServiceError,
} from "../../core/errors.ts";
import { sleep } from "../../core/sleep.ts";

/** The public hub, used when no endpoint (mirror) is given. */
export const DEFAULT_HUB_ENDPOINT = "https://huggingface.co";

/** `ServiceError.code` of failures worth retrying (connection errors, 5xx, 429, a cut body). */
export const HUB_UNAVAILABLE = "hub_unavailable";
/** `ServiceError.code` of a downloaded file that failed its size or checksum: retry from 0. */
export const HUB_INTEGRITY = "hub_integrity";

/** One file of a hub listing. */
export interface HubSibling {
  /** Path inside the repository, `/`-separated. */
  rfilename: string;
  /** Size in bytes, when the hub reports it. */
  size?: number;
  /** LFS pointer data: the content's sha256 and size, for files stored in LFS. */
  lfs?: { sha256: string; size: number };
}

/** What the listing API answers (the fields we use). */
export interface HubListing {
  /** Commit sha the revision points at, when reported. */
  sha?: string;
  /** The files of the revision. */
  siblings: HubSibling[];
}

/** An open file download. */
export interface HubFileResponse {
  /** 200 (whole file), 206 (from `start`) or 416 (`start` is at or past the end). */
  status: 200 | 206 | 416;
  /** The body; null for 416. */
  body: ReadableStream<Uint8Array> | null;
  /** Offset of the first body byte in the file. */
  start: number;
  /** Full size of the file, when the answer tells it. */
  totalSize: number | null;
  /** sha256 of the content from `X-Linked-Etag`/`ETag`, when the hub gives one (LFS files). */
  sha256: string | null;
}

/** Options of {@link HubClient}. */
export interface HubClientOptions {
  /** Hub or mirror base URL; default {@link DEFAULT_HUB_ENDPOINT}. */
  endpoint?: string;
  /** Token sent as `Authorization: Bearer` (for private or gated models). */
  token?: string;
  /** Retries of transient failures (connection errors, 5xx, 429); default 3. */
  retries?: number;
  /** First back-off delay in ms, doubled each retry; default 500. */
  retryDelayMs?: number;
  /** Give up on an answer (or a body that sends nothing) after this many ms; default 60000. */
  timeoutMs?: number;
}

/** Per-request options. */
export interface HubRequestOptions {
  /** Cancels the request (a `CancelledError`). */
  signal?: AbortSignal;
}

/** Identifies a file (or, without `path`, a repo revision) for messages. */
interface Target {
  repo: string;
  revision: string;
  path?: string;
}

/**
 * Talks to a model hub (or a mirror of it) over HTTP.
 *
 * @example
 * ```ts
 * import { HubClient } from "./hub_client.ts";
 * const hub = new HubClient({ endpoint: "https://huggingface.co" });
 * const listing = await hub.listFiles("Xenova/all-MiniLM-L6-v2", "main");
 * console.log(listing.siblings.map((s) => s.rfilename));
 * ```
 */
export class HubClient {
  /** The base URL, without a trailing slash. */
  readonly endpoint: string;
  /** Retries of transient failures. */
  readonly retries: number;
  /** First back-off delay in ms. */
  readonly retryDelayMs: number;
  /** Longest wait for an answer or for the next bytes of a body, in ms. */
  readonly timeoutMs: number;
  #token: string | undefined;
  #origin: string;

  /** Checks the endpoint (a bad one is a `ConfigurationError` naming HUB_ENDPOINT). */
  constructor(options: HubClientOptions = {}) {
    const endpoint = (options.endpoint ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, "");
    let url: URL;
    try {
      url = new URL(endpoint);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("scheme");
    } catch (cause) {
      throw new ConfigurationError(
        `HUB_ENDPOINT "${endpoint}" is not an http(s) URL: use e.g. ${DEFAULT_HUB_ENDPOINT}`,
        { param: "HUB_ENDPOINT", cause },
      );
    }
    this.endpoint = endpoint;
    this.#origin = url.origin;
    this.#token = options.token || undefined;
    this.retries = options.retries ?? 3;
    this.retryDelayMs = options.retryDelayMs ?? 500;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** URL of a file: `{endpoint}/{repo}/resolve/{revision}/{path}`. */
  fileUrl(repo: string, revision: string, path: string): string {
    const file = path.split("/").map(encodeURIComponent).join("/");
    return `${this.endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${file}`;
  }

  /** URL of the listing API for a revision. */
  listingUrl(repo: string, revision: string): string {
    return `${this.endpoint}/api/models/${repo}/revision/${encodeURIComponent(revision)}`;
  }

  /**
   * Lists the files of a revision (with sizes and LFS sha256 where the hub gives them).
   * Retries transient failures with back-off.
   */
  listFiles(repo: string, revision: string, options: HubRequestOptions = {}): Promise<HubListing> {
    const target = { repo, revision };
    return this.withRetry(options.signal, async () => {
      const url = `${this.listingUrl(repo, revision)}?blobs=true`;
      const res = await this.#fetch(url, {}, target, options.signal);
      if (!res.ok) throw await this.#errorFor(res, target);
      let json: unknown;
      try {
        json = await res.json();
      } catch (cause) {
        throw this.#abortedOr(options.signal, cause) ?? new ServiceError(
          `the model hub at ${this.endpoint} sent a listing for "${repo}" that is not JSON: ` +
            `check that HUB_ENDPOINT points at a hub or a mirror of it`,
          { code: HUB_UNAVAILABLE, cause },
        );
      }
      return parseListing(json, this.endpoint, repo);
    });
  }

  /**
   * Opens a file for download from byte `start` (a `Range` request when `start > 0`).
   * Follows redirects (sending the token only to the hub's own origin). Does not retry:
   * the caller resumes from what it has.
   */
  async openFile(
    repo: string,
    revision: string,
    path: string,
    options: { start?: number; signal?: AbortSignal } = {},
  ): Promise<HubFileResponse> {
    const target = { repo, revision, path };
    const start = options.start ?? 0;
    const headers: Record<string, string> = start > 0 ? { range: `bytes=${start}-` } : {};
    let url = this.fileUrl(repo, revision, path);
    let sha256: string | null = null;
    let linkedSize: number | null = null;
    for (let hop = 0; hop <= 5; hop++) {
      const res = await this.#fetch(url, headers, target, options.signal);
      // LFS files answer with the content's sha256 here, also on the redirect to the CDN.
      sha256 ??= sha256From(res.headers.get("x-linked-etag")) ??
        sha256From(res.headers.get("etag"));
      linkedSize ??= numberOrNull(res.headers.get("x-linked-size"));
      if (res.status >= 300 && res.status < 400 && res.headers.has("location")) {
        await res.body?.cancel();
        url = new URL(res.headers.get("location")!, url).href;
        continue;
      }
      if (res.status === 416) {
        await res.body?.cancel();
        return { status: 416, body: null, start, totalSize: linkedSize, sha256 };
      }
      if (res.status !== 200 && res.status !== 206) throw await this.#errorFor(res, target);
      const length = numberOrNull(res.headers.get("content-length"));
      if (res.status === 206) {
        const range = /bytes (\d+)-(\d+)\/(\d+|\*)/.exec(res.headers.get("content-range") ?? "");
        if (range === null || Number(range[1]) !== start) {
          await res.body?.cancel();
          throw new ServiceError(
            `the model hub at ${this.endpoint} answered a request for bytes ${start}- of ` +
              `"${path}" with the wrong range (${res.headers.get("content-range")})`,
            { code: HUB_INTEGRITY },
          );
        }
        const total = range[3] === "*" ? linkedSize : Number(range[3]);
        return { status: 206, body: res.body, start, totalSize: total, sha256 };
      }
      return { status: 200, body: res.body, start: 0, totalSize: length ?? linkedSize, sha256 };
    }
    throw new ServiceError(
      `the model hub at ${this.endpoint} redirected "${path}" of "${repo}" more than 5 times`,
      { code: HUB_UNAVAILABLE },
    );
  }

  /**
   * Runs `fn`, retrying it with exponential back-off while it fails with a transient
   * {@link ServiceError} (code {@link HUB_UNAVAILABLE} or {@link HUB_INTEGRITY}).
   */
  async withRetry<T>(
    signal: AbortSignal | undefined,
    fn: (attempt: number) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0;; attempt++) {
      try {
        return await fn(attempt);
      } catch (err) {
        const transient = err instanceof ServiceError &&
          (err.code === HUB_UNAVAILABLE || err.code === HUB_INTEGRITY);
        if (!transient || attempt >= this.retries || signal?.aborted) throw err;
        await sleep(this.retryDelayMs * 2 ** attempt, signal);
        if (signal?.aborted) throw new CancelledError("the model download was cancelled");
      }
    }
  }

  async #fetch(
    url: string,
    headers: Record<string, string>,
    target: Target,
    signal?: AbortSignal,
  ): Promise<Response> {
    const all: Record<string, string> = { ...headers };
    // Never hand the token to another origin (a CDN behind a redirect gets a signed URL).
    if (this.#token && new URL(url).origin === this.#origin) {
      all.authorization = `Bearer ${this.#token}`;
    }
    // A silent server must not hang a download forever; the timer only covers the headers.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
    try {
      return await fetch(url, { headers: all, redirect: "manual", signal: both });
    } catch (cause) {
      if (timeout.signal.aborted && !signal?.aborted) {
        throw new ServiceError(
          `the model hub at ${this.endpoint} did not answer within ${this.timeoutMs} ms ` +
            `for "${target.repo}": try again, or set HUB_ENDPOINT to a reachable mirror`,
          { code: HUB_UNAVAILABLE, cause },
        );
      }
      if (isAccessRefused(cause)) {
        const host = new URL(url).host;
        throw new ConfigurationError(
          `downloading "${target.repo}" needs network access to ${host}: add ` +
            `--allow-net=${host} to the deno command line`,
          { param: "HUB_ENDPOINT", cause },
        );
      }
      throw this.#abortedOr(signal, cause) ?? new ServiceError(
        `could not reach the model hub at ${this.endpoint} to get "${target.repo}" ` +
          `(${(cause as Error).message}): check the network, set HUB_ENDPOINT to a reachable ` +
          `mirror, or use offline mode with a model already in the cache`,
        { code: HUB_UNAVAILABLE, cause },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  #abortedOr(signal: AbortSignal | undefined, cause: unknown): CancelledError | null {
    return signal?.aborted
      ? new CancelledError("the model download was cancelled", { cause })
      : null;
  }

  async #errorFor(res: Response, target: Target): Promise<Error> {
    const detail = (await res.text().catch(() => "")).slice(0, 200).trim();
    const errorCode = res.headers.get("x-error-code") ?? "";
    const what = `model "${target.repo}"`;
    const at = `revision "${target.revision}"`;
    if (res.status === 401 || res.status === 403) {
      const given = this.#token ? " (the token given was refused)" : "";
      return new AuthenticationError(
        `the model hub at ${this.endpoint} refused access to ${what} (HTTP ${res.status})${given}: ` +
          `it is private or gated, or does not exist. Set HUB_TOKEN to a token that can read it, ` +
          `and for a gated model accept its terms on the model page first`,
        { code: "hub_unauthorized" },
      );
    }
    if (res.status === 404) {
      let message: string;
      if (errorCode === "RevisionNotFound") {
        message = `${at} of ${what} was not found on ${this.endpoint}: check the revision`;
      } else if (errorCode === "RepoNotFound" || target.path === undefined) {
        message = `${what} (${at}) was not found on ${this.endpoint}: check the model id ` +
          `and revision`;
      } else {
        message = `file "${target.path}" was not found in ${what} at ${at} on ${this.endpoint}`;
      }
      return new NotFoundError(message, { code: "hub_not_found" });
    }
    const transient = res.status >= 500 || res.status === 429 || res.status === 408;
    return new ServiceError(
      `the model hub at ${this.endpoint} answered HTTP ${res.status} for ${what}` +
        `${target.path ? ` file "${target.path}"` : ""}${detail ? `: ${detail}` : ""}` +
        (transient ? "; try again later or set HUB_ENDPOINT to a mirror" : ""),
      { code: transient ? HUB_UNAVAILABLE : "hub_error" },
    );
  }
}

function parseListing(json: unknown, endpoint: string, repo: string): HubListing {
  const obj = json as { sha?: unknown; siblings?: unknown };
  if (typeof obj !== "object" || obj === null || !Array.isArray(obj.siblings)) {
    throw new ServiceError(
      `the model hub at ${endpoint} sent a listing for "${repo}" without "siblings": check that ` +
        `HUB_ENDPOINT points at a hub or a mirror of it`,
      { code: "hub_error" },
    );
  }
  const siblings: HubSibling[] = [];
  for (const s of obj.siblings as Record<string, unknown>[]) {
    if (typeof s?.rfilename !== "string") continue;
    const sibling: HubSibling = { rfilename: s.rfilename };
    if (typeof s.size === "number") sibling.size = s.size;
    const lfs = s.lfs as { sha256?: unknown; size?: unknown } | undefined;
    if (typeof lfs?.sha256 === "string" && typeof lfs.size === "number") {
      sibling.lfs = { sha256: lfs.sha256.toLowerCase(), size: lfs.size };
      sibling.size ??= lfs.size;
    }
    siblings.push(sibling);
  }
  return typeof obj.sha === "string" ? { sha: obj.sha, siblings } : { siblings };
}

/** The sha256 in an (optionally weak, quoted) ETag, or null when it is not one. */
function sha256From(etag: string | null): string | null {
  const m = /^(?:W\/)?"?([0-9a-f]{64})"?$/i.exec(etag ?? "");
  return m ? m[1].toLowerCase() : null;
}

function numberOrNull(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value)) return null;
  return Number(value);
}
