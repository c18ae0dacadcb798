/**
 * `svc llm model show <id>`: one registry entry with the files and size on disk.
 *
 * @module
 */

import { join } from "node:path";
import { OutputPaths } from "../config/output_paths.ts";
import { NotFoundError, ValidationError } from "../core/errors.ts";
import { filesOnDisk, openRegistry } from "./_common.ts";
import { formatBytes, formatTable } from "./_format.ts";
import { parseCommandArgs } from "./args.ts";

/** Help text of `svc llm model show`. */
export const LLM_MODEL_SHOW_HELP = `svc llm model show — one registered model and its files

Usage: svc llm model show <id> [--json]

  --json                 print the entry and its files as JSON

An id that is not registered exits with 66.
Permissions: --allow-read=<SVC_HOME> (and the model's folder when it lies elsewhere)
--allow-env.`;

/** Runs `svc llm model show`; returns the exit code. */
export async function llmModelShow(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, "svc llm model show", {
    json: { type: "boolean" },
  }, true);
  if (values.help) {
    console.log(LLM_MODEL_SHOW_HELP);
    return 0;
  }
  const id = singleId(positionals, "show");
  const registry = openRegistry(OutputPaths.resolve());
  const entry = await registry.get(id);
  if (entry === null) throw notRegistered(id, registry.manifestPath);
  const files = await filesOnDisk(entry.path);
  const onDisk = files.reduce((sum, f) => sum + f.size, 0);
  const remote = entry.source === "fine-tune" ? await readJob(entry.path) : null;
  if (values.json) {
    console.log(JSON.stringify({ ...entry, files, sizeOnDisk: onDisk, job: remote }, null, 2));
    return 0;
  }
  const time = (t: number | null) => (t === null ? "never" : new Date(t).toISOString());
  const lines = [
    `id:          ${entry.id}`,
    `source:      ${entry.source}`,
    `path:        ${entry.path}`,
    `revision:    ${entry.revision ?? "-"}`,
    `size:        ${formatBytes(entry.sizeBytes)} registered, ${formatBytes(onDisk)} on disk` +
    ` (${files.length} files)`,
    `added:       ${time(entry.addedAt)}`,
    `last used:   ${time(entry.lastUsed)}`,
  ];
  if (remote) {
    lines.push(`remote model: ${remote.fine_tuned_model ?? "-"} (job ${remote.id ?? "?"})`);
    if (remote.provider) lines.push(`provider:    ${remote.provider}`);
  }
  console.log(lines.join("\n"));
  if (files.length === 0) {
    console.log(`\nno files at ${entry.path} (moved or deleted?)`);
  } else {
    console.log("");
    console.log(
      formatTable(["FILE", "SIZE"], files.map((f) => [f.path, formatBytes(f.size)]), {
        alignRight: [1],
      }),
    );
  }
  return 0;
}

/** The one positional id of `show`/`delete`, or a ValidationError. */
export function singleId(positionals: string[], verb: string): string {
  if (positionals.length !== 1 || positionals[0].trim() === "") {
    throw new ValidationError(
      `svc llm model ${verb} takes one model id (got ${positionals.length}): ` +
        `svc llm model ${verb} <id>`,
      { param: "id" },
    );
  }
  return positionals[0];
}

/** The error of an id that is not in the registry (exit 66). */
export function notRegistered(id: string, manifest: string): NotFoundError {
  return new NotFoundError(
    `model '${id}' is not registered (registry ${manifest}); 'svc llm model list' shows ` +
      "the registered ones",
    { code: "model_not_found", param: "id" },
  );
}

async function readJob(
  folder: string,
): Promise<{ id?: string; fine_tuned_model?: string; provider?: string } | null> {
  try {
    return JSON.parse(await Deno.readTextFile(join(folder, "job.json")));
  } catch {
    return null;
  }
}
