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
import { errorMessage, ServiceUnavailableError } from "../core/errors.ts";
import { getLogger, type LogFields } from "../core/logging.ts";
import type { WireChatMessage } from "../protocol/chat_request.ts";
import type { ResponseCaps, StateStore } from "../state/state_store.ts";
import { MemoryResponses } from "./_memory_responses.ts";
import { ResponseFolder } from "./_response_folder.ts";
import { parseStoredResponse, SHARED_OWNER, type StoredResponse } from "./stored_response.ts";

export { RESPONSE_FILE } from "./_response_folder.ts";
export { parseStoredResponse, SHARED_OWNER, type StoredResponse } from "./stored_response.ts";

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
const encoder = new TextEncoder();
// Seconds a client waits before asking again when the state store is out of reach.
const STATE_RETRY_AFTER_S = 5;

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
  readonly #state: StateStore | undefined;
  readonly #guard: StateGuard | undefined;
  readonly #caps: Required<ResponseCaps>;
  readonly #maxEntryBytes: number;
  readonly #log: ResponseStoreLogger;
  /** Without a folder (and no `state`). */
  readonly #memory: MemoryResponses;
  /** With a folder (and no `state`). */
  readonly #folder: ResponseFolder | undefined;

  constructor(options: ResponseStoreOptions = {}) {
    this.#state = options.state;
    this.#guard = options.stateGuard;
    const maxTotalBytes = Math.max(1, options.maxTotalBytes ?? DEFAULT_MAX_RESPONSE_STORE_BYTES);
    this.#caps = {
      maxEntries: Math.max(1, options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES),
      maxTotalBytes,
      maxAgeMs: Math.max(1, options.maxAgeMs ?? DEFAULT_MAX_RESPONSE_AGE_MS),
    };
    this.#maxEntryBytes = Math.min(
      Math.max(1, options.maxEntryBytes ?? DEFAULT_MAX_STORED_RESPONSE_BYTES),
      maxTotalBytes,
    );
    this.#log = options.logger ?? getLogger("responses");
    this.#memory = new MemoryResponses(this.#caps);
    this.#folder = options.dir === undefined
      ? undefined
      : new ResponseFolder(options.dir, this.#caps, this.#log);
  }

  /**
   * The stored response of `owner`, or undefined when it was never stored, evicted or deleted, is
   * another owner's (or its file is unreadable as a response: logged). A state store that cannot
   * be read is a {@link ServiceUnavailableError} (503 `state_unavailable`): not known to be gone; a
   * file the server has no permission to read, a `ConfigurationError` (500) that says so.
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
      const expired = typeof created === "number" && now - created * 1000 > this.#caps.maxAgeMs;
      return expired ? undefined : entry;
    }
    if (this.#folder === undefined) return this.#memory.read(id, owner, now);
    return await this.#folder.read(id, owner, now);
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
    if (this.#folder === undefined) {
      return this.#memory.write(id, { json, bytes, at: now, owner })
        ? { stored: true }
        : { stored: false, warning: "not stored: the id is taken" };
    }
    return await this.#folder.write(id, owner, json, now) ? { stored: true } : notWritten();
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
    if (this.#folder === undefined) return this.#memory.delete(id, owner);
    return await this.#folder.delete(id, owner);
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
      await this.#shared((state) => state.putResponse(id, owner, json, this.#caps));
      return { stored: true };
    } catch (err) {
      this.#log.error("response not stored: the store could not be written", {
        id,
        store: this.#state!.description,
        error: errorMessage(err),
      });
      return notWritten();
    }
  }
}

// A write that failed (logged where it failed, with the folder or the store).
function notWritten(): PutResult {
  return { stored: false, warning: "not stored: the response store could not be written" };
}
