/**
 * The one-time move of a response folder (one JSON file per response, what `svc llm serve` kept
 * before the state store) into the state store, so chains started before an upgrade go on after
 * it. Oldest first, under the store's caps; files that are not readable responses are left out
 * (logged); the folder is then renamed `<dir>.migrated`, so the next start does nothing.
 *
 * @module
 */

import { join } from "node:path";
import { getLogger } from "../core/logging.ts";
import type { ResponseCaps, StateStore } from "../state/state_store.ts";
import {
  DEFAULT_MAX_RESPONSE_STORE_BYTES,
  DEFAULT_MAX_STORED_RESPONSE_BYTES,
  DEFAULT_MAX_STORED_RESPONSES,
  parseStoredResponse,
  RESPONSE_FILE,
  SHARED_OWNER,
} from "./response_store.ts";

/** Imports the responses of `dir` into `state`; returns how many. Nothing when `dir` is absent. */
export async function importResponseFiles(
  dir: string,
  state: StateStore,
  caps: ResponseCaps = {
    maxEntries: DEFAULT_MAX_STORED_RESPONSES,
    maxTotalBytes: DEFAULT_MAX_RESPONSE_STORE_BYTES,
  },
): Promise<number> {
  const files: { id: string; path: string; mtime: number }[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      const id = RESPONSE_FILE.exec(entry.name)?.[1];
      if (!entry.isFile || id === undefined) continue;
      const path = join(dir, entry.name);
      files.push({ id, path, mtime: (await Deno.stat(path)).mtime?.getTime() ?? 0 });
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
  const log = getLogger("responses");
  let imported = 0;
  for (const { id, path } of files.sort((a, b) => a.mtime - b.mtime)) {
    const json = await Deno.readTextFile(path);
    const entry = parseStoredResponse(json, id);
    if (entry === undefined || json.length > DEFAULT_MAX_STORED_RESPONSE_BYTES) {
      log.warn("a stored response file was not imported (not a readable response)", { file: path });
      continue;
    }
    const owner = typeof entry.owner === "string" ? entry.owner : SHARED_OWNER;
    await state.putResponse(id, owner, json, caps);
    imported++;
  }
  await Deno.rename(dir, `${dir}.migrated`);
  if (imported > 0) {
    log.info(`imported ${imported} stored responses into ${state.description}`, { dir });
  }
  return imported;
}
