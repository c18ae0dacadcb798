/**
 * The on-disk cache of downloaded models, laid out like the hub's own cache so it is easy to
 * inspect and clean:
 *
 * ```
 * <cache>/models--org--name/
 *   refs/<revision>             commit sha the revision pointed at when last downloaded
 *   snapshots/<commit>/...      the files, ready for transformers.js to load
 *   listings/<commit>.json      the hub listing, so offline mode knows which files make it up
 * ```
 *
 * Files only appear under `snapshots/` once complete (downloads go to `*.incomplete` first);
 * refs and listings are written to a temporary name and renamed.
 *
 * @module
 */

import { join } from "node:path";
import { writeFileAtomic } from "../../core/atomic_file.ts";
import type { HubListing } from "./hub_client.ts";
import { parseRepoId } from "./repo_id.ts";

/**
 * One repository's folder in the model cache.
 *
 * @example
 * ```ts
 * import { SnapshotCache } from "./snapshot.ts";
 * const cache = new SnapshotCache("/tmp/svc-cache", "Xenova/all-MiniLM-L6-v2");
 * cache.repoDir; // "/tmp/svc-cache/models--Xenova--all-MiniLM-L6-v2"
 * const commit = await cache.readRef("main"); // null until downloaded
 * ```
 */
export class SnapshotCache {
  /** `<cache>/models--org--name`. */
  readonly repoDir: string;

  /** The cache folder and repo id (checked: a bad id is a `ValidationError`). */
  constructor(cacheDir: string, repo: string) {
    this.repoDir = join(cacheDir, SnapshotCache.folderName(repo));
  }

  /** Folder name of a repo in the cache: `models--org--name`. */
  static folderName(repo: string): string {
    const { owner, name } = parseRepoId(repo);
    return ["models", ...(owner ? [owner] : []), name].join("--");
  }

  /** Folder of a snapshot. `commit` is a sha, or a revision name when the hub gave no sha. */
  snapshotDir(commit: string): string {
    return join(this.repoDir, "snapshots", safeName(commit));
  }

  /** The commit a revision pointed at when last downloaded, or null. */
  async readRef(revision: string): Promise<string | null> {
    try {
      const text = (await Deno.readTextFile(this.#refPath(revision))).trim();
      return text === "" ? null : text;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    }
  }

  /** Records that `revision` points at `commit`. */
  async writeRef(revision: string, commit: string): Promise<void> {
    await writeFileAtomic(this.#refPath(revision), commit, { createDir: true });
  }

  /** The stored listing of a commit, or null. */
  async readListing(commit: string): Promise<HubListing | null> {
    try {
      const json = JSON.parse(await Deno.readTextFile(this.#listingPath(commit)));
      return Array.isArray(json?.siblings) ? json as HubListing : null;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof SyntaxError) return null;
      throw err;
    }
  }

  /** Stores the listing of a commit. */
  async writeListing(commit: string, listing: HubListing): Promise<void> {
    await writeFileAtomic(this.#listingPath(commit), JSON.stringify(listing), { createDir: true });
  }

  /** Size of a complete file in a snapshot, or null when it is not there. */
  async fileSize(commit: string, path: string): Promise<number | null> {
    try {
      const info = await Deno.stat(join(this.snapshotDir(commit), path));
      return info.isFile ? info.size : null;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return null;
      throw err;
    }
  }

  #refPath(revision: string): string {
    return join(this.repoDir, "refs", safeName(revision));
  }

  #listingPath(commit: string): string {
    return join(this.repoDir, "listings", `${safeName(commit)}.json`);
  }
}

// Revisions may hold "/" (refs/pr/1): keep them one flat, reversible file name.
function safeName(revision: string): string {
  return encodeURIComponent(revision);
}
