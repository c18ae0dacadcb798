/**
 * `svc llm model list`: the models in the model registry, as a table.
 *
 * @module
 */

import { OutputPaths } from "../config/output_paths.ts";
import { MODEL_SOURCES, type ModelSource } from "../core/model_registry.ts";
import { openRegistry } from "./_common.ts";
import { formatBytes, formatTable } from "./_format.ts";
import { choiceOption, parseCommandArgs } from "./args.ts";

/** Help text of `svc llm model list`. */
export const LLM_MODEL_LIST_HELP = `svc llm model list — the registered models

Usage: svc llm model list [--source <s>] [--json]

  --source <s>           only models from ${MODEL_SOURCES.join(" | ")}
  --json                 print the entries as JSON

The registry is <SVC_HOME>/models/registry.json ('svc llm model download' adds to it).
Permissions: --allow-read=<SVC_HOME> --allow-env.`;

/** Runs `svc llm model list`; returns the exit code. */
export async function llmModelList(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm model list", {
    source: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) {
    console.log(LLM_MODEL_LIST_HELP);
    return 0;
  }
  const source = choiceOption<ModelSource>(values, "source", MODEL_SOURCES);
  const registry = openRegistry(OutputPaths.resolve());
  const models = await registry.list(source ? { source } : {});
  if (values.json) {
    console.log(JSON.stringify(models, null, 2));
    return 0;
  }
  if (models.length === 0) {
    console.log(
      `no models registered${source ? ` from ${source}` : ""} in ${registry.manifestPath}; ` +
        "add one with 'svc llm model download <id>'",
    );
    return 0;
  }
  const rows = models.map((m) => [
    m.id,
    m.source,
    m.revision ?? "-",
    m.sizeBytes > 0 ? formatBytes(m.sizeBytes) : "-",
    m.lastUsed ? new Date(m.lastUsed).toISOString().slice(0, 16).replace("T", " ") : "never",
    m.path,
  ]);
  console.log(
    formatTable(["ID", "SOURCE", "REVISION", "SIZE", "LAST USED", "PATH"], rows, {
      alignRight: [3],
    }),
  );
  return 0;
}
