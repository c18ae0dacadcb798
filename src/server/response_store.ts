/**
 * Stored responses (for `previous_response_id`, `item_reference`, `GET /v1/responses/{id}` and
 * its `input_items`):
 * one JSON file per response in a folder (mode 0600: they hold conversations), at most
 * `maxEntries` of them, the oldest removed first. Without a folder they live in memory only.
 *
 * Each entry keeps the whole conversation as chat messages (history, input, output; not the
 * instructions, which OpenAI does not carry over), so a later turn needs one read.
 *
 * @module
 */
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic_file.ts";
import type { WireChatMessage } from "../protocol/chat_request.ts";
import type { ResponseInputItem } from "../protocol/responses_input_items.ts";
import type { ResponseObject } from "../protocol/responses_response.ts";

/** One stored response. */
export interface StoredResponse {
  response: ResponseObject;
  /**
   * This response's own input as items with ids (not the earlier turns of a chain, as OpenAI's
   * `input_items`); absent in files stored before it was kept, which list no items.
   */
  input?: ResponseInputItem[];
  /** The conversation up to and including this response's output. */
  messages: WireChatMessage[];
}

/** Options of {@link ResponseStore}. */
export interface ResponseStoreOptions {
  /** Folder of the files; in memory when left out. */
  dir?: string;
  /** Most responses kept (default {@link DEFAULT_MAX_STORED_RESPONSES}). */
  maxEntries?: number;
}

/** How many responses a store keeps by default. */
export const DEFAULT_MAX_STORED_RESPONSES = 1000;

// Our ids only: nothing else can name a file.
const ID = /^resp_[0-9a-f]{32}$/;

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
  readonly #max: number;
  readonly #memory = new Map<string, StoredResponse>();
  /** Ids oldest first (files: read from the folder on first use). */
  #order: Promise<string[]> | undefined;

  constructor(options: ResponseStoreOptions = {}) {
    this.#dir = options.dir;
    this.#max = Math.max(1, options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES);
  }

  /** The stored response, or undefined when it was never stored, evicted or deleted. */
  async get(id: string): Promise<StoredResponse | undefined> {
    if (!ID.test(id)) return undefined;
    if (this.#dir === undefined) return this.#memory.get(id);
    try {
      return JSON.parse(await Deno.readTextFile(this.#path(id))) as StoredResponse;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return undefined;
      throw err;
    }
  }

  /** Stores a response, then evicts the oldest beyond the cap. */
  async put(entry: StoredResponse): Promise<void> {
    const id = entry.response.id;
    const order = await this.#ids();
    if (this.#dir === undefined) {
      this.#memory.set(id, entry);
    } else {
      await writeFileAtomic(this.#path(id), JSON.stringify(entry), {
        mode: 0o600,
        createDir: true,
      });
    }
    order.push(id);
    while (order.length > this.#max) await this.#remove(order.shift()!);
  }

  /** Deletes a response; false when there was none. */
  async delete(id: string): Promise<boolean> {
    if (!ID.test(id)) return false;
    const order = await this.#ids();
    const at = order.indexOf(id);
    if (at >= 0) order.splice(at, 1);
    return await this.#remove(id);
  }

  async #remove(id: string): Promise<boolean> {
    if (this.#dir === undefined) return this.#memory.delete(id);
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

  // The folder's responses, oldest first by modification time (they are written once).
  #ids(): Promise<string[]> {
    return this.#order ??= (async () => {
      if (this.#dir === undefined) return [];
      const found: { id: string; mtime: number }[] = [];
      try {
        for await (const entry of Deno.readDir(this.#dir)) {
          const id = entry.name.replace(/\.json$/, "");
          if (!entry.isFile || !ID.test(id)) continue;
          const info = await Deno.stat(this.#path(id)).catch(() => undefined);
          if (info) found.push({ id, mtime: info.mtime?.getTime() ?? 0 });
        }
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
      return found.sort((a, b) => a.mtime - b.mtime).map((f) => f.id);
    })();
  }
}
