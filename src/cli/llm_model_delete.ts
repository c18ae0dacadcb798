/**
 * `svc llm model delete <id>`: removes a model's files (when Svc put them there) and its
 * registry entry.
 *
 * @module
 */

import { dirname, sep } from "node:path";
import { OutputPaths } from "../config/output_paths.ts";
import { ValidationError } from "../core/errors.ts";
import type { ModelEntry } from "../core/model_registry.ts";
import { isInside, openRegistry, sizeOnDisk, writeStdout } from "./_common.ts";
import { formatBytes } from "./_format.ts";
import { modelInUse, modelUsers } from "./_model_users.ts";
import { parseCommandArgs } from "./args.ts";
import { notRegistered, singleId } from "./llm_model_show.ts";
import { defaultServeStatePath } from "./serve_state.ts";

/** Help text of `svc llm model delete`. */
export const LLM_MODEL_DELETE_HELP = `svc llm model delete — remove a model's files and its entry

Usage: svc llm model delete <id> [--yes] [--force]

  --yes                  do not ask for confirmation (needed when stdin is not a terminal)
  --force                delete it even while a running server uses it

Files are removed only when they lie inside the Svc output folder (<SVC_HOME>): a hub model's
whole cache folder (every revision), a demo model's folder, a fine-tune record. A model
registered from a folder of your own keeps its files; only the entry goes.
A model whose files a running 'svc llm serve' or 'svc llm run' uses is not deleted (exit 75):
the message names the server; stop it first, or pass --force.
An id that is not registered exits with 66.
Permissions: --allow-read=<SVC_HOME> --allow-write=<SVC_HOME> --allow-env.`;

/** Runs `svc llm model delete`; returns the exit code. */
export async function llmModelDelete(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, "svc llm model delete", {
    yes: { type: "boolean", short: "y" },
    force: { type: "boolean", short: "f" },
  }, true);
  if (values.help) {
    console.log(LLM_MODEL_DELETE_HELP);
    return 0;
  }
  const id = singleId(positionals, "delete");
  const paths = OutputPaths.resolve();
  const registry = openRegistry(paths);
  const entry = await registry.get(id);
  if (entry === null) throw notRegistered(id, registry.manifestPath);
  const target = filesToRemove(entry, paths);
  // Only files pulled from under a server matter: an entry alone is nothing it reads.
  const users = target
    ? await modelUsers(entry, target, {
      enginesDir: paths.engines,
      statePath: defaultServeStatePath(),
    })
    : [];
  if (users.length > 0 && !values.force) throw modelInUse(id, users);
  for (const user of users) {
    console.error(`svc: warning: --force: deleting '${id}' while ${user.what} uses it`);
  }
  const size = target ? await sizeOnDisk(target) : 0;
  if (!values.yes) {
    if (!Deno.stdin.isTerminal()) {
      throw new ValidationError(
        `not deleting '${id}' without confirmation: pass --yes (stdin is not a terminal)`,
        { param: "yes" },
      );
    }
    const what = target ? `${target} (${formatBytes(size)})` : "its registry entry only";
    writeStdout(`delete ${id}: ${what}? [y/N] `);
    const answer = await readAnswer();
    if (!/^y(es)?$/i.test(answer.trim())) {
      console.log("nothing deleted");
      return 1;
    }
  }
  if (target) {
    await Deno.remove(target, { recursive: true }).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
  }
  await registry.remove(id);
  if (target) console.log(`deleted ${id}: removed ${target} (${formatBytes(size)}) and its entry`);
  else {
    console.log(
      `deleted the entry of ${id}; its files at ${entry.path} were left in place (not inside ` +
        `${paths.base})`,
    );
  }
  return 0;
}

/**
 * What to remove on disk for `entry`: for a hub snapshot the repository's whole cache folder
 * (`models--org--name`), else the entry's path — but only inside the output base folder, so a
 * user's own model folder is never deleted. Null when nothing is to be removed.
 */
export function filesToRemove(entry: ModelEntry, paths: OutputPaths): string | null {
  let target = entry.path;
  if (entry.source === "hub") {
    const snapshots = dirname(target);
    if (snapshots.split(sep).pop() === "snapshots") {
      const repoDir = dirname(snapshots);
      if (repoDir.split(sep).pop()?.startsWith("models--")) target = repoDir;
    }
  }
  if (!isInside(target, paths.base) || target === paths.base) return null;
  // Never a whole output sub-folder (hub/, models/, …) itself.
  if (dirname(target) === paths.base) return null;
  return target;
}

async function readAnswer(): Promise<string> {
  const buffer = new Uint8Array(256);
  const n = await Deno.stdin.read(buffer);
  return n === null ? "" : new TextDecoder().decode(buffer.subarray(0, n));
}
