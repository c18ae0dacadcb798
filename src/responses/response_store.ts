/**
 * Stored responses (for `previous_response_id`, `item_reference`, `GET /v1/responses/{id}` and
 * its `input_items`): one JSON file per response in a folder (0700, files 0600: they hold
 * conversations), in memory without a folder, or in a shared state store (`state`: SQLite or
 * PostgreSQL, one table every gateway replica reads and writes; the caps then hold for the table,
 * evicted in the write's own transaction).
 *
 * Each response has an owner (an opaque string: the gateway uses the id of the managed key that
 * created it, {@link SHARED_OWNER} for everyone else): only that owner reads, continues or deletes
 * it; for any other it does not exist.
 *
 * Bounded four ways: an entry over `maxEntryBytes` of JSON is not stored (the caller is told),
 * entries older than `maxAgeMs` (30 days by default, OpenAI's retention) are not returned and are
 * evicted on the next write, and beyond `maxEntries` responses or `maxTotalBytes` of one owner
 * that owner's oldest are removed first (one owner never evicts another's). The
 * caps hold for the folder, not the process: after each write the store lists the folder (every
 * process sharing it sees the others' files) and evicts down to the caps. Writes in flight at once
 * may pass a cap by their own number until their eviction runs; two evicting processes may remove
 * a little more than needed.
 *
 * Each entry keeps only its own turn as chat messages (its input and output; not the
 * instructions, which OpenAI does not carry over) and the id of the response it continues, so a
 * chain of n turns stores O(n) text; {@link ResponseStore.conversation} rebuilds the whole
 * conversation by walking back through the chain. Entries written before (no
 * `previousResponseId` field) hold the whole conversation and end the walk.
 *
 * @module
 */
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic_file.ts";
import {
  ConfigurationError,
  errorMessage,
  isAccessRefused,
  ServiceUnavailableError,
} from "../core/errors.ts";
import { getLogger, type LogFields } from "../core/logging.ts";
import type { WireChatMessage } from "../protocol/chat_request.ts";
import type { ResponseInputItem } from "../protocol/responses_input_items.ts";
import type { ResponseObject } from "../protocol/responses_object.ts";
import type { StateStore } from "../state/state_store.ts";

/** One stored response. */
export interface StoredResponse {
  response: ResponseObject;
  /**
   * This response's own input as items with ids (not the earlier turns of a chain, as OpenAI's
   * `input_items`); absent in files stored before it was kept, which list no items.
   */
  input?: ResponseInputItem[];
  /**
   * Chat messages: this response's own turn (input and output) when `previousResponseId` is
   * present; the whole conversation up to and including its output in entries without it (stored
   * before chains were kept turn by turn).
   */
  messages: WireChatMessage[];
  /**
   * The response this one continues (null for the first of a chain); its presence marks
   * `messages` as this turn only.
   */
  previousResponseId?: string | null;
  /**
   * Who stored it, in entries kept in a folder or in memory (absent: {@link SHARED_OWNER}); the
   * state store keeps it in a column instead.
   */
  owner?: string;
}

/**
 * The owner of responses stored without a managed key: by callers of a gateway or engine that
 * needs no key, and by the gateway's static keys (SVC_CHAT_API_KEY, SVC_ADMIN_API_KEY). Entries
 * stored before owners were kept are this owner's.
 */
export const SHARED_OWNER = "";

/**
 * The outcome of {@link ResponseStore.conversation}: the messages, or the id of a response of the
 * chain that was never stored, or was evicted, expired, deleted or unreadable.
 */
export type Conversation =
  | { messages: WireChatMessage[]; missing?: undefined }
  | { missing: string; messages?: undefined };

/** What the store logs through (the core logger named `responses` by default). */
export interface ResponseStoreLogger {
  /** Something handled: an entry not stored, a corrupt file skipped. */
  warn(message: string, fields?: LogFields): void;
  /** A failure: the folder could not be written. */
  error(message: string, fields?: LogFields): void;
}

/** Options of {@link ResponseStore}. */
export interface ResponseStoreOptions {
  /** Folder of the files; in memory when left out (and no `state`). */
  dir?: string;
  /** A shared state store to keep them in (takes precedence over `dir`). */
  state?: StateStore;
  /** Most responses kept per owner (default {@link DEFAULT_MAX_STORED_RESPONSES}). */
  maxEntries?: number;
  /** Largest entry stored, in bytes of JSON (default {@link DEFAULT_MAX_STORED_RESPONSE_BYTES}). */
  maxEntryBytes?: number;
  /** Most bytes of one owner's entries (default {@link DEFAULT_MAX_RESPONSE_STORE_BYTES}). */
  maxTotalBytes?: number;
  /** Age after which an entry is gone, in milliseconds (default {@link DEFAULT_MAX_RESPONSE_AGE_MS}). */
  maxAgeMs?: number;
  /** Where warnings go. */
  logger?: ResponseStoreLogger;
  /**
   * Runs each call to `state` (the gateway's `StateHealth`): its timeout, and the outage it
   * records for readiness and the log. The store's own answers stay as they are.
   */
  stateGuard?: StateGuard;
}

/** Runs one call to the state store, as the gateway's `StateHealth` does. */
export interface StateGuard {
  run<T>(operation: () => Promise<T>, options?: { meanwhile?: string }): Promise<T>;
}

/** The outcome of {@link ResponseStore.put}. */
export interface PutResult {
  /** Whether a later `get` finds it. */
  stored: boolean;
  /** Why not, in a few words fit for a response header (the details are logged). */
  warning?: string;
}

/** How many responses of one owner a store keeps by default. */
export const DEFAULT_MAX_STORED_RESPONSES = 1000;
/** The largest response a store keeps by default: 1 MiB of JSON. */
export const DEFAULT_MAX_STORED_RESPONSE_BYTES = 1024 * 1024;
/** How many bytes of one owner's responses a store keeps by default: 256 MiB. */
export const DEFAULT_MAX_RESPONSE_STORE_BYTES = 256 * 1024 * 1024;
/** How long a store keeps a response by default: 30 days, like OpenAI. */
export const DEFAULT_MAX_RESPONSE_AGE_MS = 30 * 24 * 60 * 60 * 1000;

// Our ids only: nothing else can name a file.
const ID = /^resp_[0-9a-f]{32}$/;
/** A stored response's file name; group 1 is its id. */
export const RESPONSE_FILE = /^(resp_[0-9a-f]{32})\.json$/;
// writeFileAtomic's temporary files of our entries.
const TEMP = /^\.resp_[0-9a-f]{32}\.json\.tmp-/;
// A temporary file this old belongs to a killed write (a live one takes milliseconds).
const TEMP_MAX_AGE_MS = 60_000;
const encoder = new TextEncoder();

interface Indexed {
  bytes: number;
  mtime: number;
  owner: string;
}

interface Usage {
  count: number;
  bytes: number;
}

/**
 * A bounded store of responses.
 *
 * @example
 * ```ts
 * import { ResponseStore } from "./response_store.ts";
 * const store = new ResponseStore({ maxEntries: 10 });
 * console.log(await store.get("resp_0123456789abcdef0123456789abcdef")); // undefined
 * ```
 */
export class ResponseStore {
  readonly #dir: string | undefined;
  readonly #state: StateStore | undefined;
  readonly #guard: StateGuard | undefined;
  readonly #maxEntries: number;
  readonly #maxEntryBytes: number;
  readonly #maxTotalBytes: number;
  readonly #maxAgeMs: number;
  readonly #log: ResponseStoreLogger;
  /** In memory: the JSON of each entry, oldest first. */
  readonly #memory = new Map<string, { json: string; bytes: number; at: number; owner: string }>();
  /** In memory: how many entries and bytes each owner has. */
  readonly #memoryUsage = new Map<string, Usage>();
  /** On disk: size and age of the folder's files as last listed (they are written once). */
  readonly #index = new Map<string, Indexed>();
  #opened: Promise<void> | undefined;

  constructor(options: ResponseStoreOptions = {}) {
    this.#dir = options.dir;
    this.#state = options.state;
    this.#guard = options.stateGuard;
    this.#maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES);
    this.#maxTotalBytes = Math.max(1, options.maxTotalBytes ?? DEFAULT_MAX_RESPONSE_STORE_BYTES);
    this.#maxEntryBytes = Math.min(
      Math.max(1, options.maxEntryBytes ?? DEFAULT_MAX_STORED_RESPONSE_BYTES),
      this.#maxTotalBytes,
    );
    this.#maxAgeMs = Math.max(1, options.maxAgeMs ?? DEFAULT_MAX_RESPONSE_AGE_MS);
    this.#log = options.logger ?? getLogger("responses");
  }

  /**
   * The stored response of `owner`, or undefined when it was never stored, evicted or deleted, is
   * another owner's (or its file is unreadable as a response: logged). A state store that cannot
   * be read is a {@link ServiceUnavailableError} (503 `state_unavailable`): not known to be gone; a
   * file the server has no permission to read, a {@link ConfigurationError} (500) that says so.
   */
  async get(id: string, owner: string = SHARED_OWNER): Promise<StoredResponse | undefined> {
    if (!ID.test(id)) return undefined;
    return await this.#read(id, owner, Date.now());
  }

  /**
   * The whole conversation up to and including response `id` (history, inputs, outputs as chat
   * messages), rebuilt by walking back through its chain; or the id of the response of the chain
   * (`id` itself or an ancestor) where the walk found one gone: the turns cannot be rebuilt.
   */
  async conversation(id: string, owner: string = SHARED_OWNER): Promise<Conversation> {
    const turns: WireChatMessage[][] = [];
    const seen = new Set<string>();
    for (let at: string | null = id; at !== null;) {
      // A loop cannot be written by put() (an id is new when stored); read as a broken chain.
      const entry: StoredResponse | undefined = seen.has(at)
        ? undefined
        : await this.get(at, owner);
      if (entry === undefined) return { missing: at };
      seen.add(at);
      turns.push(entry.messages);
      const previous: string | null | undefined = entry.previousResponseId;
      // Absent: an entry that holds the whole conversation.
      at = previous === undefined ? null : previous;
    }
    return { messages: turns.reverse().flat() };
  }

  // Expired entries are not returned: in memory by when they were stored, on disk by the file's
  // modification time (written once), in the state store by the response's `created_at`.
  async #read(id: string, owner: string, now: number): Promise<StoredResponse | undefined> {
    if (this.#state !== undefined) {
      const entry = await this.#getShared(id, owner);
      const created = entry?.response.created_at;
      const expired = typeof created === "number" && now - created * 1000 > this.#maxAgeMs;
      return expired ? undefined : entry;
    }
    if (this.#dir === undefined) {
      const kept = this.#memory.get(id);
      const live = kept && kept.owner === owner && now - kept.at <= this.#maxAgeMs;
      return live ? JSON.parse(kept.json) : undefined;
    }
    await this.#open();
    const path = this.#path(id);
    let text: string;
    try {
      const mtime = (await Deno.stat(path)).mtime?.getTime();
      if (mtime !== undefined && now - mtime > this.#maxAgeMs) return undefined;
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
   * Stores a response of `owner`, then evicts that owner's oldest beyond the caps (and anyone's
   * expired). Never throws: an entry over the size cap or a failed write is logged and reported
   * in the result.
   */
  async put(entry: StoredResponse, owner: string = SHARED_OWNER): Promise<PutResult> {
    const id = entry.response.id;
    const now = Date.now();
    const { owner: _, ...own } = entry;
    // The state store keeps the owner in its own column.
    const json = JSON.stringify(
      this.#state !== undefined || owner === SHARED_OWNER ? own : { ...own, owner },
    );
    const bytes = encoder.encode(json).byteLength;
    if (bytes > this.#maxEntryBytes) {
      this.#log.warn("response not stored: too large", { id, bytes, limit: this.#maxEntryBytes });
      return {
        stored: false,
        warning: `not stored: ${bytes} bytes of JSON, over the limit of ${this.#maxEntryBytes}`,
      };
    }
    if (this.#state !== undefined) return await this.#putShared(id, owner, json);
    if (this.#dir === undefined) {
      const old = this.#memory.get(id);
      // Ids are random: one of another owner is never taken over.
      if (old !== undefined && old.owner !== owner) {
        return { stored: false, warning: "not stored: the id is taken" };
      }
      this.#deleteMemory(id);
      this.#memory.set(id, { json, bytes, at: now, owner });
      const usage = this.#usageOf(owner);
      usage.count++;
      usage.bytes += bytes;
      this.#evictMemory(owner, now);
      return { stored: true };
    }
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
      return { stored: false, warning: "not stored: the response store could not be written" };
    }
    try {
      await this.#refresh({ id, owner });
      await this.#evictFiles(id, owner, now);
    } catch (err) {
      // Stored all the same; the next write evicts again.
      this.#log.warn("could not evict old responses", {
        dir: this.#dir,
        error: errorMessage(err),
      });
    }
    return { stored: true };
  }

  /**
   * Deletes a response of `owner`; false when there was none (or it is another owner's). A state
   * store that cannot be written is a {@link ServiceUnavailableError}.
   */
  async delete(id: string, owner: string = SHARED_OWNER): Promise<boolean> {
    if (!ID.test(id)) return false;
    if (this.#state !== undefined) {
      try {
        return await this.#shared((state) => state.deleteResponse(id, owner));
      } catch (err) {
        throw this.#unavailable("could not delete a stored response", err);
      }
    }
    if (this.#dir === undefined) {
      return this.#memory.get(id)?.owner === owner && this.#deleteMemory(id);
    }
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
    return await this.#removeFile(id);
  }

  async #getShared(id: string, owner: string): Promise<StoredResponse | undefined> {
    let text: string | undefined;
    try {
      text = await this.#shared((state) => state.getResponse(id, owner));
    } catch (err) {
      // Not "not found": the client would drop a conversation that is only out of reach.
      throw this.#unavailable("could not read a stored response", err);
    }
    if (text === undefined) return undefined;
    const entry = parseStoredResponse(text, id);
    if (entry !== undefined) return entry;
    this.#log.warn("skipping a corrupt stored response (answered as unknown)", { id });
    return undefined;
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

  // One call to the state store, through the guard when there is one.
  #shared<T>(call: (state: StateStore) => Promise<T>): Promise<T> {
    const state = this.#state!;
    if (this.#guard === undefined) return call(state);
    return this.#guard.run(() => call(state), {
      meanwhile: "Stored responses cannot be read or written meanwhile",
    });
  }

  // Logs the state store's failure; the client is told to come back, not where the store is.
  #unavailable(what: string, err: unknown): ServiceUnavailableError {
    this.#log.error(what, { store: this.#state!.description, error: errorMessage(err) });
    return new ServiceUnavailableError(
      "The stored responses cannot be reached right now (the gateway's state store is " +
        "unavailable); the response is not known to be gone: retry later.",
      { code: "state_unavailable", retryAfterSeconds: STATE_RETRY_AFTER_S, cause: err },
    );
  }

  async #putShared(id: string, owner: string, json: string): Promise<PutResult> {
    try {
      await this.#shared((state) =>
        state.putResponse(id, owner, json, {
          maxEntries: this.#maxEntries,
          maxTotalBytes: this.#maxTotalBytes,
          maxAgeMs: this.#maxAgeMs,
        })
      );
      return { stored: true };
    } catch (err) {
      this.#log.error("response not stored: the store could not be written", {
        id,
        store: this.#state!.description,
        error: errorMessage(err),
      });
      return { stored: false, warning: "not stored: the response store could not be written" };
    }
  }

  #usageOf(owner: string): Usage {
    let usage = this.#memoryUsage.get(owner);
    if (usage === undefined) this.#memoryUsage.set(owner, usage = { count: 0, bytes: 0 });
    return usage;
  }

  #deleteMemory(id: string): boolean {
    const kept = this.#memory.get(id);
    if (kept === undefined) return false;
    this.#memory.delete(id);
    const usage = this.#usageOf(kept.owner);
    usage.count--;
    usage.bytes -= kept.bytes;
    if (usage.count === 0) this.#memoryUsage.delete(kept.owner);
    return true;
  }

  // Oldest first (insertion order), so the expired ones lead: anyone's expired entries, then
  // `owner`'s oldest while it is over the caps.
  #evictMemory(owner: string, now: number): void {
    for (const [id, kept] of this.#memory) {
      const usage = this.#usageOf(owner);
      const fits = usage.count <= this.#maxEntries && usage.bytes <= this.#maxTotalBytes;
      const expired = now - kept.at > this.#maxAgeMs;
      if (fits && !expired) break;
      if (expired || kept.owner === owner) this.#deleteMemory(id);
    }
  }

  // Oldest first by modification time (a stable sort: ties in the order found, so this process's
  // own writes in their order): anyone's expired files, then `owner`'s oldest while it is over the
  // caps; never the one just written (a clock that jumped could make it look oldest).
  async #evictFiles(keep: string, owner: string, now: number): Promise<void> {
    let count = 0;
    let total = 0;
    let expired = false;
    for (const entry of this.#index.values()) {
      if (entry.owner === owner) {
        count++;
        total += entry.bytes;
      }
      if (now - entry.mtime > this.#maxAgeMs) expired = true;
    }
    if (count <= this.#maxEntries && total <= this.#maxTotalBytes && !expired) return;
    // Sorted oldest first, so the expired ones lead.
    const oldest = [...this.#index].sort(([, a], [, b]) => a.mtime - b.mtime);
    for (const [id, entry] of oldest) {
      const fits = count <= this.#maxEntries && total <= this.#maxTotalBytes;
      const old = now - entry.mtime > this.#maxAgeMs;
      if (fits && !old) break;
      if (id === keep || (!old && entry.owner !== owner)) continue;
      this.#index.delete(id);
      await this.#removeFile(id);
      if (entry.owner === owner) {
        count--;
        total -= entry.bytes;
      }
    }
  }

  async #removeFile(id: string): Promise<boolean> {
    try {
      await Deno.remove(this.#path(id));
      return true;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return false;
      throw err;
    }
  }

  #path(id: string): string {
    return join(this.#dir!, `${id}.json`);
  }

  // Once: the folder private (an older one may be 0755), temporary files of killed writes gone.
  // A failure is logged, not thrown: the store then answers as empty and writes report it.
  #open(): Promise<void> {
    return this.#opened ??= (async () => {
      const dir = this.#dir!;
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
    for await (const entry of Deno.readDir(this.#dir!)) {
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

// Seconds a client waits before asking again when the state store is out of reach.
const STATE_RETRY_AFTER_S = 5;

function ownerOf(entry: StoredResponse | undefined): string {
  return typeof entry?.owner === "string" ? entry.owner : SHARED_OWNER;
}

/** The stored response `id` in `text`, or undefined when `text` is not one (corrupt, other id). */
export function parseStoredResponse(text: string, id: string): StoredResponse | undefined {
  try {
    const entry = JSON.parse(text) as StoredResponse;
    if (entry?.response?.id === id && Array.isArray(entry.messages)) return entry;
  } catch {
    // not JSON
  }
  return undefined;
}
