/**
 * Downloads a model by hub id into the model cache and returns the local folder that
 * transformers.js loads. See {@link downloadModel}.
 *
 * @module
 */

import { join, relative, sep } from "node:path";
import {
  CancelledError,
  ConfigurationError,
  NotFoundError,
  ServiceError,
} from "../../core/errors.ts";
import { downloadFile, INCOMPLETE_SUFFIX } from "./file_download.ts";
import type { Dtype } from "../dtype.ts";
import {
  type ModelFilePlan,
  planModelFiles,
  type SelectModelFilesOptions,
} from "./file_selection.ts";
import { HUB_UNAVAILABLE, HubClient, type HubListing } from "./hub_client.ts";
import { DownloadProgress, type HubProgressCallback } from "./progress.ts";
import { checkRevision, DEFAULT_REVISION, isCommitSha, parseRepoId } from "./repo_id.ts";
import { SnapshotCache } from "./snapshot.ts";

/** Options of {@link downloadModel}. */
export interface DownloadModelOptions extends SelectModelFilesOptions {
  /** Model cache folder (the output paths' cache). */
  cacheDir: string;
  /** Branch, tag or commit sha; default `main`. */
  revision?: string;
  /** Hub or mirror base URL (HUB_ENDPOINT); default https://huggingface.co. */
  endpoint?: string;
  /** Hub token (HUB_TOKEN), sent as `Authorization: Bearer`. */
  token?: string;
  /** Never touch the network: use the cache or fail saying how to download. */
  offline?: boolean;
  /** Download every file again, ignoring cached and partial files. */
  force?: boolean;
  /** Cancels the download; partial files stay and are resumed next time. */
  signal?: AbortSignal;
  /** Receives progress events. */
  onProgress?: HubProgressCallback;
  /** Least ms between two `file_progress` events; default 100. */
  progressIntervalMs?: number;
  /** Retries of transient failures per request; default 3. */
  retries?: number;
  /** First retry delay in ms, doubled each retry; default 500. */
  retryDelayMs?: number;
  /** Longest wait for an answer or for more bytes, in ms; default 60000. */
  timeoutMs?: number;
}

/** A model ready on disk. */
export interface DownloadedModel {
  /** Folder to hand to transformers.js. */
  path: string;
  /** Repository id. */
  repo: string;
  /** Revision asked for. */
  revision: string;
  /** Commit sha of the snapshot, when the hub reported one. */
  commit: string | null;
  /** Repository paths of the files in the folder that belong to this model and dtype. */
  files: string[];
  /** The dtype fetched: the named one, or the best for the device the repository has. */
  dtype: Dtype;
  /** Base name of its ONNX file (`model` or `decoder_model_merged`). */
  modelFileName: string;
  /** Set when the named dtype was missing and `allowFallback` chose another; says which. */
  fallback?: string;
  /** Bytes fetched over the network by this call (0 when all came from the cache). */
  bytesFetched: number;
  /** True when nothing was fetched. */
  fromCache: boolean;
  /** Set when the hub could not be reached and the cached copy was used instead. */
  warning: string | null;
}

/**
 * Makes a hub model available locally: lists the revision, picks the files transformers.js
 * needs for the dtype (the named one, else the best the repository has for `device`; the ONNX
 * file under `onnx/model*` or `onnx/decoder_model_merged*`, with its external data), downloads
 * the missing ones resumably into `<cacheDir>/models--org--name/snapshots/<commit>/` and
 * records `refs/<revision>`, so the same call with `offline: true` finds it later. When the hub
 * cannot be reached and the cache holds the model, the cache is used and `warning` says so.
 *
 * Errors: `AuthenticationError` (401/403: private or gated, set HUB_TOKEN), `NotFoundError`
 * (unknown repo, revision or file; offline without a cached copy), `ServiceError` (hub
 * unreachable or failing after retries), `ConfigurationError` (a missing `--allow-net` or
 * `--allow-write`), `CancelledError` (the signal aborted).
 *
 * @example
 * ```ts
 * import { downloadModel } from "@svc/cli/engine";
 * const model = await downloadModel("Xenova/all-MiniLM-L6-v2", {
 *   cacheDir: "/tmp/svc-models",
 *   dtype: "q8",
 *   onProgress: (e) => console.log(e.kind, e.bytesDone, "/", e.bytesTotal),
 * });
 * console.log(model.path); // .../models--Xenova--all-MiniLM-L6-v2/snapshots/<sha>
 * ```
 */
export async function downloadModel(
  repo: string,
  options: DownloadModelOptions,
): Promise<DownloadedModel> {
  parseRepoId(repo);
  const revision = checkRevision(options.revision ?? DEFAULT_REVISION);
  if (!options.cacheDir) {
    throw new ConfigurationError("downloadModel() needs a cache folder (cacheDir)", {
      param: "cacheDir",
    });
  }
  const cache = new SnapshotCache(options.cacheDir, repo);
  if (options.offline) {
    const found = await findCached(cache, repo, revision, options);
    if ("missing" in found) throw notCachedError(repo, revision, options, found.missing);
    return reportCached(found, repo, revision, options, null);
  }

  const client = new HubClient({
    endpoint: options.endpoint,
    token: options.token,
    retries: options.retries,
    retryDelayMs: options.retryDelayMs,
    timeoutMs: options.timeoutMs,
  });
  await requirePermissions(client.endpoint, options.cacheDir);
  let listing: HubListing;
  try {
    listing = await client.listFiles(repo, revision, { signal: options.signal });
  } catch (err) {
    // Like the hub's own client: an unreachable hub is no reason to refuse a cached model.
    if (err instanceof ServiceError && err.code === HUB_UNAVAILABLE && !options.force) {
      const found = await findCached(cache, repo, revision, options).catch(() => null);
      if (found !== null && !("missing" in found)) {
        return reportCached(
          found,
          repo,
          revision,
          options,
          `${err.message}; using the cached copy`,
        );
      }
    }
    throw err;
  }

  const sha = listing.sha !== undefined && isCommitSha(listing.sha)
    ? listing.sha.toLowerCase()
    : null;
  const commit = sha ?? revision;
  const plan = planModelFiles(listing, repo, options);
  const files = plan.files;
  const dir = cache.snapshotDir(commit);
  const progress = new DownloadProgress(repo, revision, files, {
    onProgress: options.onProgress,
    intervalMs: options.progressIntervalMs,
  });
  progress.start();
  let fetched = 0;
  for (const f of files) {
    if (options.signal?.aborted) throw new CancelledError("the model download was cancelled");
    const have = options.force ? null : await cache.fileSize(commit, f.path);
    if (have !== null && (f.size === null || have === f.size)) {
      progress.fileDone(f.path, have, true);
      continue;
    }
    // Fetch by commit sha so a branch moving mid-download cannot mix two versions.
    const result = await downloadFile(
      client,
      { repo, revision: commit, path: f.path, dest: join(dir, f.path) },
      {
        expectedSize: f.size,
        expectedSha256: f.sha256,
        force: options.force,
        signal: options.signal,
        onStart: (bytes, total) => progress.fileStart(f.path, bytes, total),
        onBytes: (bytes, total) => progress.fileBytes(f.path, bytes, total),
      },
    );
    fetched += result.fetched;
    progress.fileDone(f.path, result.size, false);
  }
  await cache.writeListing(commit, listing);
  if (commit !== revision) await cache.writeRef(revision, commit);
  progress.done(dir);
  return {
    path: dir,
    repo,
    revision,
    commit: sha,
    files: files.map((f) => f.path),
    ...choiceOf(plan),
    bytesFetched: fetched,
    fromCache: fetched === 0,
    warning: null,
  };
}

interface CachedModel {
  commit: string;
  dir: string;
  files: { path: string; size: number }[];
  plan: ModelFilePlan;
}

function choiceOf(
  plan: ModelFilePlan,
): Pick<DownloadedModel, "dtype" | "modelFileName" | "fallback"> {
  return {
    dtype: plan.dtype,
    modelFileName: plan.modelFileName,
    ...(plan.fallback !== undefined ? { fallback: plan.fallback } : {}),
  };
}

/** Finds a complete cached copy, or says which files are missing. */
async function findCached(
  cache: SnapshotCache,
  repo: string,
  revision: string,
  options: DownloadModelOptions,
): Promise<CachedModel | { missing: string[] }> {
  const commit = (await cache.readRef(revision)) ?? revision;
  const dir = cache.snapshotDir(commit);
  // The stored listing knows every file (external data included); a snapshot copied in by
  // hand has none, so list what is there.
  const listing = (await cache.readListing(commit)) ?? await listFolder(dir);
  if (listing.siblings.length === 0) return { missing: [] };
  let plan: ModelFilePlan;
  try {
    // With no dtype named, prefer one whose ONNX file is in the cache to the device's best.
    let cachedChoice: SelectModelFilesOptions = {};
    if (options.dtype === undefined) {
      const present = new Set<string>();
      for (const s of listing.siblings) {
        if (!s.rfilename.endsWith(".onnx")) continue;
        const size = await cache.fileSize(commit, s.rfilename);
        if (size !== null && (s.size == null || size === s.size)) present.add(s.rfilename);
      }
      if (present.size > 0) {
        const onlyCached = listing.siblings.filter((s) =>
          !s.rfilename.endsWith(".onnx") || present.has(s.rfilename)
        );
        const cached = planModelFiles({ siblings: onlyCached }, repo, options);
        cachedChoice = { dtype: cached.dtype, modelFileName: cached.modelFileName };
      }
    }
    plan = planModelFiles(listing, repo, { ...options, ...cachedChoice });
  } catch (err) {
    if (err instanceof NotFoundError) return { missing: [err.message] };
    throw err;
  }
  const files: { path: string; size: number }[] = [];
  const missing: string[] = [];
  for (const f of plan.files) {
    const size = await cache.fileSize(commit, f.path);
    if (size === null || (f.size !== null && size !== f.size)) missing.push(f.path);
    else files.push({ path: f.path, size });
  }
  return missing.length > 0 ? { missing } : { commit, dir, files, plan };
}

function reportCached(
  found: CachedModel,
  repo: string,
  revision: string,
  options: DownloadModelOptions,
  warning: string | null,
): DownloadedModel {
  const progress = new DownloadProgress(repo, revision, found.files, {
    onProgress: options.onProgress,
  });
  progress.start();
  for (const f of found.files) progress.fileDone(f.path, f.size, true);
  progress.done(found.dir);
  return {
    path: found.dir,
    repo,
    revision,
    commit: isCommitSha(found.commit) ? found.commit : null,
    files: found.files.map((f) => f.path),
    ...choiceOf(found.plan),
    bytesFetched: 0,
    fromCache: true,
    warning,
  };
}

function notCachedError(
  repo: string,
  revision: string,
  options: DownloadModelOptions,
  missing: string[],
): NotFoundError {
  const what = missing.length === 0
    ? "is not in"
    : `is incomplete in (missing: ${missing.join("; ")})`;
  return new NotFoundError(
    `model "${repo}" (revision ${revision}, dtype ${options.dtype ?? "any"}) ${what} the ` +
      `model cache ${options.cacheDir}, and offline mode is on: download it once with network ` +
      `access (svc llm model download ${repo}), or turn offline mode off`,
    { code: "model_not_cached", param: "model" },
  );
}

/** Fails early, naming the flag to add, rather than halfway through a download. */
async function requirePermissions(endpoint: string, cacheDir: string): Promise<void> {
  const host = new URL(endpoint).host;
  const needs: [Deno.PermissionDescriptor, string][] = [
    [{ name: "net", host }, `--allow-net=${host}`],
    [{ name: "write", path: cacheDir }, `--allow-write=${cacheDir}`],
  ];
  for (const [descriptor, flag] of needs) {
    if ((await Deno.permissions.query(descriptor)).state !== "granted") {
      throw new ConfigurationError(
        `downloading a model needs ${flag}: add it to the deno command line, or use offline ` +
          `mode with a model already in the cache`,
        { param: descriptor.name === "net" ? "HUB_ENDPOINT" : "cacheDir" },
      );
    }
  }
}

/** A listing made from the complete files in a folder (none when it does not exist). */
async function listFolder(dir: string): Promise<HubListing> {
  const siblings: HubListing["siblings"] = [];
  const walk = async (folder: string): Promise<void> => {
    for await (const entry of Deno.readDir(folder)) {
      const full = join(folder, entry.name);
      if (entry.isDirectory) await walk(full);
      else if (entry.isFile && !entry.name.endsWith(INCOMPLETE_SUFFIX)) {
        siblings.push({ rfilename: relative(dir, full).split(sep).join("/") });
      }
    }
  };
  try {
    await walk(dir);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return { siblings };
}
