/**
 * The response store's folder: one JSON file per response (folder 0700, files 0600: they hold
 * conversations), expired by modification time (files are written once), and after each write
 * the folder listed and evicted down to the writer's caps (every process sharing the folder sees
 * the others' files).
 *
 * @module
 */
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic_file.ts";
import { ConfigurationError, errorMessage, isAccessRefused } from "../core/errors.ts";
import type { ResponseCaps } from "../state/state_store.ts";
import type { ResponseStoreLogger } from "./response_store.ts";
import {
  ownerOf,
  parseStoredResponse,
  SHARED_OWNER,
  type StoredResponse,
} from "./stored_response.ts";

/** A stored response's file name; group 1 is its id. */
export const RESPONSE_FILE = /^(resp_[0-9a-f]{32})\.json$/;
// writeFileAtomic's temporary files of our entries.
const TEMP = /^\.resp_[0-9a-f]{32}\.json\.tmp-/;
// A temporary file this old belongs to a killed write (a live one takes milliseconds).
const TEMP_MAX_AGE_MS = 60_000;

interface Indexed {
  bytes: number;
  mtime: number;
  owner: string;
}

/** A folder of stored responses, under per-owner caps. */
export class ResponseFolder {
  readonly #dir: string;
  readonly #caps: Required<ResponseCaps>;
  readonly #log: ResponseStoreLogger;
  /** Size and age of the folder's files as last listed (they are written once). */
  readonly #index = new Map<string, Indexed>();
  #opened: Promise<void> | undefined;

  constructor(dir: string, caps: Required<ResponseCaps>, log: ResponseStoreLogger) {
    this.#dir = dir;
    this.#caps = caps;
    this.#log = log;
  }

  /**
   * The response `id` of `owner`, unless expired, gone or unreadable as a response (logged); a
   * file the server has no permission to read is a {@link ConfigurationError}.
   */
  async read(id: string, owner: string, now: number): Promise<StoredResponse | undefined> {
    await this.#open();
    const path = this.#path(id);
    let text: string;
    try {
      const mtime = (await Deno.stat(path)).mtime?.getTime();
      if (mtime !== undefined && now - mtime > this.#caps.maxAgeMs) return undefined;
      text = await Deno.readTextFile(path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return undefined;
      // A file the server may not read is there: saying it is gone would be a lie.
      if (isAccessRefused(err)) throw this.#unreadable(id, path, err);
      // Otherwise unreadable is unknown to the client (the store is a cache); the operator sees why.
      this.#log.error("could not read a stored response", { file: path, error: errorMessage(err) });
      return undefined;
    }
    const entry = parseStoredResponse(text, id);
    if (entry !== undefined) return ownerOf(entry) === owner ? entry : undefined;
    this.#log.warn("skipping a corrupt stored response (answered as unknown)", { file: path });
    return undefined;
  }

  /**
   * Writes `json` as the response `id` of `owner`, then evicts; false (logged) when the folder
   * could not be written.
   */
  async write(id: string, owner: string, json: string, now: number): Promise<boolean> {
    await this.#open();
    try {
      await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(this.#path(id), json, { mode: 0o600 });
    } catch (err) {
      this.#log.error("response not stored: the store could not be written", {
        id,
        dir: this.#dir,
        error: errorMessage(err),
      });
      return false;
    }
    try {
      await this.#refresh({ id, owner });
      await this.#evict(id, owner, now);
    } catch (err) {
      // Stored all the same; the next write evicts again.
      this.#log.warn("could not evict old responses", {
        dir: this.#dir,
        error: errorMessage(err),
      });
    }
    return true;
  }

  /** Deletes the response `id` of `owner`; false when there was none (or it is another owner's). */
  async delete(id: string, owner: string): Promise<boolean> {
    await this.#open();
    // Expired or not, only its owner may remove it (a corrupt file: the shared owner).
    let text: string;
    try {
      text = await Deno.readTextFile(this.#path(id));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return false;
      if (isAccessRefused(err)) throw this.#unreadable(id, this.#path(id), err);
      throw err;
    }
    if (ownerOf(parseStoredResponse(text, id)) !== owner) return false;
    this.#index.delete(id);
    return await this.#remove(id);
  }

  // A stored response's file the server has no permission to read: a 500 that says so (the client
  // is told the file's name, the log its path).
  #unreadable(id: string, path: string, err: unknown): ConfigurationError {
    this.#log.error("a stored response's file cannot be read: permission denied", {
      file: path,
      error: errorMessage(err),
    });
    const why = err instanceof Deno.errors.NotCapable
      ? "the server runs without Deno's read permission for it (--allow-read)"
      : "the server's user has no permission to read it";
    return new ConfigurationError(
      `The stored response '${id}' exists but its file ${id}.json cannot be read: ${why}. ` +
        "The server's admin should make the responses folder readable by the server " +
        "(its log names the file).",
      { cause: err },
    );
  }

  // Oldest first by modification time (a stable sort: ties in the order found, so this process's
  // own writes in their order): anyone's expired files, then `owner`'s oldest while it is over the
  // caps; never the one just written (a clock that jumped could make it look oldest).
  async #evict(keep: string, owner: string, now: number): Promise<void> {
    const { maxEntries, maxTotalBytes, maxAgeMs } = this.#caps;
    let count = 0;
    let total = 0;
    let expired = false;
    for (const entry of this.#index.values()) {
      if (entry.owner === owner) {
        count++;
        total += entry.bytes;
      }
      if (now - entry.mtime > maxAgeMs) expired = true;
    }
    if (count <= maxEntries && total <= maxTotalBytes && !expired) return;
    // Sorted oldest first, so the expired ones lead.
    const oldest = [...this.#index].sort(([, a], [, b]) => a.mtime - b.mtime);
    for (const [id, entry] of oldest) {
      const fits = count <= maxEntries && total <= maxTotalBytes;
      const old = now - entry.mtime > maxAgeMs;
      if (fits && !old) break;
      if (id === keep || (!old && entry.owner !== owner)) continue;
      this.#index.delete(id);
      await this.#remove(id);
      if (entry.owner === owner) {
        count--;
        total -= entry.bytes;
      }
    }
  }

  async #remove(id: string): Promise<boolean> {
    try {
      await Deno.remove(this.#path(id));
      return true;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return false;
      throw err;
    }
  }

  #path(id: string): string {
    return join(this.#dir, `${id}.json`);
  }

  // Once: the folder private (an older one may be 0755), temporary files of killed writes gone.
  // A failure is logged, not thrown: the store then answers as empty and writes report it.
  #open(): Promise<void> {
    return this.#opened ??= (async () => {
      const dir = this.#dir;
      try {
        await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
        if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
        const now = Date.now();
        for await (const entry of Deno.readDir(dir)) {
          if (!entry.isFile || !TEMP.test(entry.name)) continue;
          const path = join(dir, entry.name);
          const info = await Deno.stat(path).catch(() => undefined);
          if (info && now - (info.mtime?.getTime() ?? 0) > TEMP_MAX_AGE_MS) {
            await Deno.remove(path).catch(() => {});
          }
        }
      } catch (err) {
        this.#log.error("could not prepare the response store folder", {
          dir,
          error: errorMessage(err),
        });
      }
    })();
  }

  // Lists the folder: files of other processes join the index (one stat and one read each, once,
  // for their owner), removed ones leave it. `written` is the file this process just wrote.
  async #refresh(written: { id: string; owner: string }): Promise<void> {
    const seen = new Set<string>();
    for await (const entry of Deno.readDir(this.#dir)) {
      const id = entry.isFile ? RESPONSE_FILE.exec(entry.name)?.[1] : undefined;
      if (id === undefined) continue;
      seen.add(id);
      if (this.#index.has(id)) continue;
      const path = this.#path(id);
      const info = await Deno.stat(path).catch(() => undefined);
      if (info === undefined) continue;
      const owner = id === written.id ? written.owner : await Deno.readTextFile(path).then(
        (text) => ownerOf(parseStoredResponse(text, id)),
        () => SHARED_OWNER,
      );
      this.#index.set(id, { bytes: info.size, mtime: info.mtime?.getTime() ?? 0, owner });
    }
    for (const id of this.#index.keys()) if (!seen.has(id)) this.#index.delete(id);
  }
}
