/**
 * Downloads one hub file resumably and atomically: bytes go to `<dest>.incomplete`, a retry
 * or a later run resumes it with `Range: bytes=N-`, and only a file whose size (and sha256,
 * when the hub gives one) checks out is renamed to `dest`. A half-downloaded file is never at
 * `dest`.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { CancelledError, ServiceError } from "../../core/errors.ts";
import { HUB_INTEGRITY, HUB_UNAVAILABLE, type HubClient } from "./hub_client.ts";

/** The file to fetch and where to put it. */
export interface HubFileRef {
  /** Repository id. */
  repo: string;
  /** Revision (preferably the commit sha) to fetch from. */
  revision: string;
  /** Path inside the repository. */
  path: string;
  /** Final local path. */
  dest: string;
}

/** Options of {@link downloadFile}. */
export interface DownloadFileOptions {
  /** Size from the listing, checked against what arrives. */
  expectedSize?: number | null;
  /** sha256 from the listing (LFS files), checked against what arrives. */
  expectedSha256?: string | null;
  /** Drop a partial file and start from byte 0. */
  force?: boolean;
  /** Cancels the download; the partial file stays for a later resume. */
  signal?: AbortSignal;
  /** A download (or resume) begins with `bytes` present. */
  onStart?: (bytes: number, total: number | null) => void;
  /** `bytes` of the file are on disk now. */
  onBytes?: (bytes: number, total: number | null) => void;
}

/** What {@link downloadFile} did. */
export interface DownloadFileResult {
  /** Final size. */
  size: number;
  /** Bytes fetched over the network by this call. */
  fetched: number;
  /** Bytes taken over from a partial file of an earlier attempt or run. */
  resumedFrom: number;
}

/** Suffix of partial files. */
export const INCOMPLETE_SUFFIX = ".incomplete";

/**
 * Fetches `file` into `file.dest`, resuming a partial download and retrying transient failures
 * (as `client.retries` and `client.retryDelayMs` say). On failure the partial file stays for the
 * next attempt; `dest` is only ever written by an atomic rename of a verified file.
 *
 * @example
 * ```ts
 * import { HubClient } from "./hub_client.ts";
 * import { downloadFile } from "./file_download.ts";
 * const hub = new HubClient();
 * await downloadFile(hub, {
 *   repo: "Xenova/all-MiniLM-L6-v2", revision: "main", path: "config.json", dest: "/tmp/config.json",
 * });
 * ```
 */
export async function downloadFile(
  client: HubClient,
  file: HubFileRef,
  options: DownloadFileOptions = {},
): Promise<DownloadFileResult> {
  const partial = file.dest + INCOMPLETE_SUFFIX;
  await Deno.mkdir(dirname(file.dest), { recursive: true });
  if (options.force) await removeIfThere(partial);
  let fetched = 0;
  let firstOffset: number | null = null;
  return await client.withRetry(options.signal, async () => {
    let offset = await sizeOf(partial);
    const expected = options.expectedSize ?? null;
    if (expected !== null && offset > expected) {
      await removeIfThere(partial);
      offset = 0;
    }
    firstOffset ??= offset;
    let total = expected;
    let sha256 = options.expectedSha256 ?? null;
    if (expected === null || offset < expected) {
      let res = await client.openFile(file.repo, file.revision, file.path, {
        start: offset,
        signal: options.signal,
      });
      if (res.status === 416) {
        // Our partial file is not a prefix of this file: start over.
        await removeIfThere(partial);
        offset = 0;
        res = await client.openFile(file.repo, file.revision, file.path, {
          signal: options.signal,
        });
      }
      if (res.status === 200) offset = 0; // the server ignored the range: restart from byte 0
      total ??= res.totalSize;
      sha256 ??= res.sha256;
      options.onStart?.(offset, total);
      fetched += await appendBody(partial, res.body!, offset, (n) => options.onBytes?.(n, total), {
        path: file.path,
        endpoint: client.endpoint,
        signal: options.signal,
        stallMs: client.timeoutMs,
      });
    }
    const size = await sizeOf(partial);
    if (total !== null && size < total) {
      throw new ServiceError(
        `the connection to ${client.endpoint} closed after ${size} of ${total} bytes of ` +
          `"${file.path}"; the download resumes from there`,
        { code: HUB_UNAVAILABLE },
      );
    }
    if (total !== null && size > total) {
      await removeIfThere(partial);
      throw integrityError(client, file, `${size} bytes arrived, expected ${total}`);
    }
    if (sha256 !== null) {
      const actual = await sha256Of(partial);
      if (actual !== sha256) {
        await removeIfThere(partial);
        throw integrityError(client, file, `sha256 ${actual}, expected ${sha256}`);
      }
    }
    await Deno.rename(partial, file.dest);
    return { size, fetched, resumedFrom: firstOffset };
  });
}

/** Writes `body` to `path` from `offset` (truncating there); returns the bytes written. */
async function appendBody(
  path: string,
  body: ReadableStream<Uint8Array>,
  offset: number,
  onBytes: (bytes: number) => void,
  ctx: { path: string; endpoint: string; signal?: AbortSignal; stallMs: number },
): Promise<number> {
  const out = await Deno.open(path, { write: true, create: true });
  let written = 0;
  try {
    await out.truncate(offset);
    await out.seek(offset, Deno.SeekMode.Start);
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await readWithin(reader, ctx.stallMs);
        // Bytes already received are still delivered after an abort: stop at the next chunk.
        ctx.signal?.throwIfAborted();
        if (done) break;
        await writeAll(out, value);
        written += value.length;
        onBytes(offset + written);
      }
    } finally {
      await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  } catch (cause) {
    if (ctx.signal?.aborted) {
      throw new CancelledError("the model download was cancelled", { cause });
    }
    throw new ServiceError(
      `the connection to ${ctx.endpoint} broke after ${offset + written} bytes of ` +
        `"${ctx.path}" (${(cause as Error).message}); the download resumes from there`,
      { code: HUB_UNAVAILABLE, cause },
    );
  } finally {
    out.close();
  }
  return written;
}

/** `reader.read()`, failing when no bytes come for `ms` (a stalled connection). */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no data for ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([reader.read(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

async function writeAll(out: Deno.FsFile, data: Uint8Array): Promise<void> {
  let done = 0;
  while (done < data.length) done += await out.write(data.subarray(done));
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  // Reading `readable` to the end closes the file.
  const file = await Deno.open(path, { read: true });
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
}

async function removeIfThere(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

function integrityError(client: HubClient, file: HubFileRef, detail: string): ServiceError {
  return new ServiceError(
    `"${file.path}" of model "${file.repo}" from ${client.endpoint} is corrupt (${detail}); ` +
      `the partial file was removed, so the next attempt starts from byte 0`,
    { code: HUB_INTEGRITY },
  );
}
