/**
 * Checks model-hub repository ids (`org/name`) and revisions before they reach a URL or a path
 * on disk, so a typo fails early with a clear message and nothing can escape the cache folder.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";

/** The revision used when none is given. */
export const DEFAULT_REVISION = "main";

/** A checked hub repository id. */
export interface RepoId {
  /** The id as given, e.g. `Xenova/all-MiniLM-L6-v2`. */
  id: string;
  /** The owner (user or organisation); empty for legacy single-name repos like `gpt2`. */
  owner: string;
  /** The model name. */
  name: string;
}

// Same characters the hub accepts; "." and ".." alone are refused separately.
const PART = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;

/**
 * Parses and checks a hub repository id (`org/name`, or a legacy single `name`).
 *
 * @example
 * ```ts
 * import { parseRepoId } from "./repo_id.ts";
 * parseRepoId("Xenova/all-MiniLM-L6-v2").name; // "all-MiniLM-L6-v2"
 * ```
 */
export function parseRepoId(repo: string): RepoId {
  const parts = repo.split("/");
  const ok = parts.length >= 1 && parts.length <= 2 &&
    parts.every((p) => PART.test(p) && !p.includes(".."));
  if (!ok) {
    throw new ValidationError(
      `"${repo}" is not a model-hub id: expected "org/name" (letters, digits, ".", "_", "-"), ` +
        `e.g. "Xenova/all-MiniLM-L6-v2", or a path to a local model folder`,
      { param: "model" },
    );
  }
  return parts.length === 2
    ? { id: repo, owner: parts[0], name: parts[1] }
    : { id: repo, owner: "", name: parts[0] };
}

/**
 * Checks a revision (branch, tag or commit sha). Slashes are allowed (`refs/pr/1`); empty
 * segments, `.`/`..` and control characters are not.
 *
 * @example
 * ```ts
 * import { checkRevision } from "./repo_id.ts";
 * checkRevision("main"); // "main"
 * ```
 */
export function checkRevision(revision: string): string {
  const bad = revision.length === 0 || revision.length > 255 || revision.includes("\\") ||
    [...revision].some((c) => c.charCodeAt(0) < 0x20) ||
    revision.split("/").some((s) => s === "" || s === "." || s === "..");
  if (bad) {
    throw new ValidationError(
      `"${revision}" is not a valid revision: use a branch, tag or commit sha such as "main"`,
      { param: "revision" },
    );
  }
  return revision;
}

/** True when `revision` looks like a full commit sha (40 hex digits). */
export function isCommitSha(revision: string): boolean {
  return /^[0-9a-f]{40}$/i.test(revision);
}
