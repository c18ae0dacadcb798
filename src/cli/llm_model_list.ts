/**
 * `svc llm model list`: the models in the model registry, as a table; then the demo models (always
 * available, generated on first use, random weights) and what a running `svc llm serve` serves.
 *
 * @module
 */

import { loadConfig } from "../config/env.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { MODEL_SOURCES, type ModelSource } from "../core/model_registry.ts";
import { DEMO_MODEL_IDS, DEMO_MODEL_SPECS } from "../engine/generated_models/demo_models.ts";
import { openRegistry } from "./_common.ts";
import { formatBytes, formatTable } from "./_format.ts";
import { choiceOption, parseCommandArgs } from "./args.ts";
import { checkRecordedPid, defaultServeStatePath, readServeState } from "./serve_state.ts";

/** Help text of `svc llm model list`. */
export const LLM_MODEL_LIST_HELP = `svc llm model list — the registered models

Usage: svc llm model list [--source <s>] [--json] [--state-file <path>]

  --source <s>           only models from ${MODEL_SOURCES.join(" | ")}
  --json                 print the registry's entries as JSON
  --state-file <path>    state file of 'svc llm serve' (default <SVC_HOME>/engines/serve.env)

The registry is <SVC_HOME>/models/registry.json ('svc llm model download' adds to it). The demo
models are listed too (always available, RANDOM weights), and, when 'svc llm serve' runs, the
models its gateway serves.
Permissions: --allow-read=<SVC_HOME> --allow-env (--allow-net=127.0.0.1 --allow-run to ask a
running 'svc llm serve').`;

/** Runs `svc llm model list`; returns the exit code. */
export async function llmModelList(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm model list", {
    source: { type: "string" },
    json: { type: "boolean" },
    "state-file": { type: "string" },
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
  } else {
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
  }
  if (source === undefined || source === "demo") {
    const rows = DEMO_MODEL_IDS.map((id) => [id, DEMO_MODEL_SPECS[id].description]);
    console.log("\nDemo models (generated on first use; RANDOM weights: meaningless text):");
    console.log(indent(formatTable(["ID", "WHAT"], rows)));
  }
  if (source === undefined) await printServed(values["state-file"] as string | undefined);
  return 0;
}

// The models the gateway of a running `svc llm serve` lists; nothing when none runs (or answers).
async function printServed(stateFile: string | undefined): Promise<void> {
  const state = await readServeState(stateFile ?? defaultServeStatePath()).catch(() => null);
  if (!state?.gatewayUrl) return;
  try {
    if (checkRecordedPid(state.pid, state.pidStart).status !== "ours") return;
  } catch {
    return; // no --allow-run: the running server is not asked
  }
  const key = loadConfig().chatApiKey;
  const body = await fetch(`${state.gatewayUrl}/models`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    signal: AbortSignal.timeout(3000),
  }).then((res) => res.ok ? res.json() : res.body?.cancel().then(() => null)).catch(() => null);
  const listed: Record<string, unknown>[] = Array.isArray(body?.data) ? body.data : [];
  if (listed.length === 0) return;
  const rows = listed.map((m) => [
    String(m.id),
    String(m.kind ?? "-"),
    String(m.status ?? "ready"),
    m.random_weights ? "RANDOM weights (demo model)" : "",
  ]);
  console.log(`\nServed now by 'svc llm serve' (${state.gatewayUrl}):`);
  console.log(indent(formatTable(["ID", "KIND", "STATUS", "NOTE"], rows)));
}

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}
