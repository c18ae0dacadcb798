/**
 * `svc llm model download <id>`: downloads a hub model into the model cache with a progress bar
 * (or generates a demo model) and registers it in the model registry. Both end with where the
 * model is and which dtype `svc llm run` loads from it.
 *
 * @module
 */

import { unknownDemoModel } from "../engine/demo_model_check.ts";
import { loadConfig } from "../config/env.ts";
import { ensureHfMirrorConfigured, getHfEndpoint } from "../config/network_region.ts";
import { OutputPaths } from "../config/output_paths.ts";
import { ValidationError } from "../core/errors.ts";
import type { ModelEntry } from "../core/model_registry.ts";
import { downloadModel } from "../engine/hub/download.ts";
import { type Dtype, DTYPE_FILE_SUFFIX, type DtypeDevice, DTYPES } from "../engine/dtype.ts";
import { chooseOnnxFileInFolder } from "../engine/onnx_file.ts";
import type { HubProgressEvent } from "../engine/hub/progress.ts";
import {
  DEMO_MODEL_IDS,
  DEMO_MODEL_SPECS,
  demoModelDtypes,
  demoModelFolder,
  type DemoModelId,
  isDemoModelCurrent,
  isDemoModelId,
  materializeDemoModel,
} from "../engine/generated_models/demo_models.ts";
import { openRegistry, sizeOnDisk } from "./_common.ts";
import { formatBytes, ProgressBar } from "./_format.ts";
import { choiceOption, DTYPE_DEFAULT_HELP, parseCommandArgs } from "./args.ts";

const DEMO_Q4 = DEMO_MODEL_IDS.filter((d) => demoModelDtypes(d).includes("q4")).join(", ");

/** Help text of `svc llm model download`. */
export const LLM_MODEL_DOWNLOAD_HELP = `svc llm model download — fetch a model and register it

Usage: svc llm model download <id> [options]

  <id>                   hub id (org/name), or a demo model (${DEMO_MODEL_IDS.join(", ")}:
                         generated locally with RANDOM weights, nothing is downloaded)
  --revision <rev>       branch, tag or commit (default main)
  --dtype <t>            weights to fetch: ${DTYPES.join(" | ")}
                         ${DTYPE_DEFAULT_HELP.replaceAll("\n", "\n                         ")}
                         (demo models are generated with all of theirs: fp32 and q8, and q4
                         for ${DEMO_Q4}; the output names the one 'svc llm run' loads)
  --device <d>           cpu | wasm | webgpu: whose default dtype to fetch (default cpu, what
                         'svc llm run' loads without a GPU)
  --force                fetch every file again (demo models: generate again)
  --offline              do not download: register the copy already in the cache

Files go to <SVC_HOME>/hub (default ./.svc/hub); the model registry is
<SVC_HOME>/models/registry.json. HUB_ENDPOINT picks a mirror (set automatically on
mainland-China networks); HUB_TOKEN is sent for private or gated models.
Progress is a bar on a terminal and plain lines otherwise (stderr).
Permissions: --allow-net=huggingface.co,cdn-lfs.huggingface.co (or the HUB_ENDPOINT host)
--allow-read --allow-write=<SVC_HOME> --allow-env (demo models need no network).`;

/** Runs `svc llm model download`; returns the exit code. */
export async function llmModelDownload(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, "svc llm model download", {
    revision: { type: "string" },
    dtype: { type: "string" },
    device: { type: "string" },
    force: { type: "boolean" },
    offline: { type: "boolean" },
  }, true);
  if (values.help) {
    console.log(LLM_MODEL_DOWNLOAD_HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new ValidationError(
      `svc llm model download takes one model id (got ${positionals.length}): ` +
        "svc llm model download <org/name>",
      { param: "id" },
    );
  }
  const id = positionals[0];
  const dtype = choiceOption(values, "dtype", DTYPES);
  const device = choiceOption(values, "device", ["cpu", "wasm", "webgpu"] as const);
  const force = Boolean(values.force);
  if (isDemoModelId(id) && values.revision !== undefined) {
    throw new ValidationError(
      `${id} is generated here, not fetched: it has no revisions (drop --revision)`,
      { param: "revision" },
    );
  }
  const config = loadConfig({ overrides: values.offline ? { offline: true } : {} });
  const paths = OutputPaths.resolve();

  if (isDemoModelId(id)) return await generateDemoModel(id, { dtype, device, force, paths });
  unknownDemoModel(id); // `demo/chatt`: a typo of a demo model, not a hub repository

  // Before anything touches the hub: on mainland-China networks this points HUB_ENDPOINT at
  // the mirror. Offline, nothing touches the hub, so the region probes are skipped too.
  if (!config.offline) await ensureHfMirrorConfigured();
  const endpoint = config.offline ? undefined : await getHfEndpoint();
  const tty = Deno.stderr.isTerminal();
  const bar = new ProgressBar({ tty, columns: tty ? terminalColumns() : undefined });
  const model = await downloadModel(id, {
    cacheDir: paths.hub,
    revision: values.revision as string | undefined,
    dtype,
    device,
    force,
    endpoint,
    token: config.hubToken,
    offline: config.offline,
    onProgress: (event) => showProgress(bar, event),
  });
  bar.finish();
  if (model.warning) console.error(`warning: ${model.warning}`);
  const entry = await openRegistry(paths).register({
    id,
    path: model.path,
    source: "hub",
    revision: model.revision,
    sizeBytes: await sizeOnDisk(model.path),
  });
  const how = model.fromCache
    ? "already in the cache"
    : `downloaded ${formatBytes(model.bytesFetched)} from ${endpoint}`;
  report(entry, `${how}; revision ${model.revision}${model.commit ? ` (${model.commit})` : ""}`);
  console.log(
    `  dtype: ${model.dtype} (onnx/${model.modelFileName}${DTYPE_FILE_SUFFIX[model.dtype]}.onnx)`,
  );
  return 0;
}

/**
 * A demo model is generated (once; `--force` again) rather than downloaded, with every dtype it
 * has. Reports them, and the one `svc llm run` loads on `device`, as a download reports its dtype;
 * a `--dtype` the model is not generated with is an error before anything is written.
 */
async function generateDemoModel(
  id: DemoModelId,
  options: { dtype?: Dtype; device?: DtypeDevice; force: boolean; paths: OutputPaths },
): Promise<number> {
  const { dtype, paths } = options;
  const dtypes: readonly string[] = demoModelDtypes(id);
  if (dtype !== undefined && !dtypes.includes(dtype)) {
    const having = DEMO_MODEL_IDS.filter((d) => (demoModelDtypes(d) as string[]).includes(dtype));
    throw new ValidationError(
      `${id} is generated with ${dtypes.join(", ")} weights only, not ${dtype}: choose one of ` +
        "those with --dtype" +
        (having.length > 0
          ? ` (${having.join(", ")} ${having.length > 1 ? "have" : "has"} ${dtype})`
          : ""),
      { param: "dtype" },
    );
  }
  const folder = demoModelFolder(id, paths.hub);
  if (options.force) await Deno.remove(folder, { recursive: true }).catch(() => {});
  const current = await isDemoModelCurrent(id, paths.hub);
  if (!current) console.error(`generating ${id}: ${DEMO_MODEL_SPECS[id].description}`);
  await materializeDemoModel(id, paths.hub);
  const entry = await openRegistry(paths).register({
    id,
    path: folder,
    source: "demo",
    sizeBytes: await sizeOnDisk(folder),
  });
  const how = current ? "already generated" : "generated";
  report(entry, `${how} (RANDOM weights: meaningless text, real timings)`);
  const device = options.device ?? "cpu";
  const choice = await chooseOnnxFileInFolder(folder, id, { dtype, device });
  const file = `onnx/${choice.modelFileName}${DTYPE_FILE_SUFFIX[choice.dtype]}.onnx`;
  console.log(
    `  dtype: ${choice.dtype} (${file})` +
      (dtype === undefined ? `, the ${device} default` : ""),
  );
  console.log(`  dtypes: ${dtypes.join(", ")} (all generated; --dtype picks one)`);
  return 0;
}

function showProgress(bar: ProgressBar, event: HubProgressEvent): void {
  const sample = { done: event.bytesDone, total: event.bytesTotal };
  const files = `${event.filesDone}/${event.filesTotal} files`;
  switch (event.kind) {
    case "start":
      bar.log(
        `${event.repo}@${event.revision}: ${event.filesTotal} files` +
          (event.bytesTotal !== null ? `, ${formatBytes(event.bytesTotal)}` : ""),
      );
      break;
    case "file_start":
    case "file_progress":
      bar.update({ ...sample, label: `${files}  ${event.file}` });
      break;
    case "file_done":
      bar.update({ ...sample, label: `${files}  ${event.file}` });
      if (!event.cached) bar.log(`  ${event.file} (${formatBytes(event.fileBytes)})`);
      break;
    case "done":
      bar.update({ ...sample, label: files }, true);
      break;
  }
}

function terminalColumns(): number | undefined {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return undefined;
  }
}

function report(entry: ModelEntry, how: string): void {
  console.log(`${entry.id}: ${how}`);
  console.log(`  path: ${entry.path}`);
  console.log(`  size: ${formatBytes(entry.sizeBytes)}`);
  console.log(`  registered as '${entry.id}' (source ${entry.source})`);
}
