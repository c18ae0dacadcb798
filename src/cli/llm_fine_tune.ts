/**
 * `svc llm fine-tune`: validates a chat-format dataset and prints its statistics, then runs the
 * job on the OpenAI-compatible fine-tuning API of COMPAT_BASE_URL / COMPAT_API_KEY, follows it
 * to the end and registers the resulting model.
 *
 * @module
 */

import { basename, join } from "node:path";
import { loadConfig } from "../config/env.ts";
import { OutputPaths } from "../config/output_paths.ts";
import {
  CancelledError,
  ConfigurationError,
  ConflictError,
  NotFoundError,
  ServiceError,
  ValidationError,
} from "../core/errors.ts";
import { openRegistry } from "./_common.ts";
import { loadTokenCounter } from "./_token_counter.ts";
import { intOption, parseCommandArgs } from "./args.ts";
import {
  type DatasetReport,
  formatDatasetReport,
  validateChatDataset,
} from "./fine_tune_dataset.ts";
import { FineTuningClient, type FineTuningJob, followJob } from "./fine_tuning_client.ts";

/** Help text of `svc llm fine-tune`. */
export const LLM_FINE_TUNE_HELP = `svc llm fine-tune — validate a chat dataset and fine-tune a model

Usage: svc llm fine-tune --base-model <id> --dataset <file.jsonl> [options]

  --base-model <id>      model to fine-tune (as the provider names it)
  --dataset <file>       training data: JSON Lines, one {"messages":[{"role","content"},…]} per
                         line; roles system, user, assistant, tool
  --validation <file>    validation data, same format
  --output <name>        name to register the result under (default: the provider's model id)
  --suffix <text>        suffix the provider adds to the fine-tuned model's name
  --epochs <n>           training epochs (hyperparameters.n_epochs; default: the provider's)
  --context <tokens>     context length to check examples against (default: the base model's
                         config when it is on this machine)
  --validate-only        stop after validating, even when a provider is configured
  --poll-interval <ms>   how often to poll the job (default 5000)

The dataset is checked line by line (JSON, schema, roles, an assistant reply in every example,
duplicates) and token counts are compared with the context. Tokens are counted with the base
model's tokenizer when it is on this machine (a demo model, a registered or cached hub model),
else approximately, and the statistics say which.
Then, with COMPAT_BASE_URL (e.g. https://api.openai.com/v1) and COMPAT_API_KEY set, the files
are uploaded (/files), the job created (/fine_tuning/jobs) and followed with its events until
it ends; Ctrl-C cancels the job. The result is registered in the model registry (source
fine-tune) with a record in <SVC_HOME>/fine_tune/<name>/job.json.
Exit codes: 65 invalid dataset, 66 file not found, 78 no provider configured, 75 --output
names a model that is not a fine-tune, 69 job failed, 130 cancelled.
Permissions: --allow-read --allow-write=<SVC_HOME> --allow-env --allow-net=<provider host>;
--allow-ffi to count tokens with the model's tokenizer (transformers.js native runtime).`;

/** Runs `svc llm fine-tune`; returns the exit code. */
export async function llmFineTune(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm fine-tune", {
    "base-model": { type: "string" },
    dataset: { type: "string" },
    validation: { type: "string" },
    output: { type: "string" },
    suffix: { type: "string" },
    epochs: { type: "string" },
    context: { type: "string" },
    "validate-only": { type: "boolean" },
    "poll-interval": { type: "string" },
  });
  if (values.help) {
    console.log(LLM_FINE_TUNE_HELP);
    return 0;
  }
  const baseModel = required(values, "base-model");
  const dataset = required(values, "dataset");
  const validation = values.validation as string | undefined;
  const epochs = intOption(values, "epochs", { min: 1, max: 100 });
  const contextOption = intOption(values, "context", { min: 1, max: 100_000_000 });
  const pollMs = intOption(values, "poll-interval", { min: 10, max: 3_600_000 }) ?? 5000;
  const config = loadConfig();
  const paths = OutputPaths.resolve();
  const registry = openRegistry(paths);

  const files = [{ role: "training", path: dataset }];
  if (validation) files.push({ role: "validation", path: validation });
  const texts = await Promise.all(files.map((f) => readDataset(f.path, f.role)));
  const tokens = await loadTokenCounter(baseModel, { paths, registry });
  const contextLength = contextOption ?? tokens.contextLength;
  const reports: DatasetReport[] = [];
  for (const [i, file] of files.entries()) {
    const report = validateChatDataset(texts[i], { counter: tokens.counter, contextLength });
    reports.push(report);
    console.log(formatDatasetReport(report, { name: `${file.role} data ${file.path}` }));
  }
  const errors = reports.reduce((n, r) => n + r.errors.length, 0);
  if (errors > 0) {
    throw new ValidationError(
      `the dataset has ${errors} error${errors > 1 ? "s" : ""} (listed above with line numbers): ` +
        "fix them and run again",
      { param: "dataset" },
    );
  }
  console.log("dataset OK");
  if (values["validate-only"]) return 0;
  if (config.compatBaseUrl === undefined || config.compatApiKey === undefined) {
    const missing = [
      config.compatBaseUrl === undefined ? "COMPAT_BASE_URL" : null,
      config.compatApiKey === undefined ? "COMPAT_API_KEY" : null,
    ].filter(Boolean).join(" and ");
    throw new ConfigurationError(
      `no fine-tuning provider configured: set ${missing} (an OpenAI-compatible API with ` +
        "/v1/files and /v1/fine_tuning/jobs, e.g. COMPAT_BASE_URL=https://api.openai.com/v1) " +
        "to run the job; nothing was uploaded (--validate-only only validates)",
      { param: config.compatBaseUrl === undefined ? "COMPAT_BASE_URL" : "COMPAT_API_KEY" },
    );
  }

  const output = values.output as string | undefined;
  const taken = output === undefined ? null : await registry.get(output);
  if (taken !== null && taken.source !== "fine-tune") {
    throw new ConflictError(
      `--output ${output} is already a registered ${taken.source} model (${taken.path}): choose ` +
        "another name, or remove it with 'svc llm model delete'",
      { param: "output" },
    );
  }

  const client = new FineTuningClient({
    baseUrl: config.compatBaseUrl,
    apiKey: config.compatApiKey,
  });
  const uploaded: string[] = [];
  for (const [i, file] of files.entries()) {
    const result = await client.uploadFile(basename(file.path), texts[i]);
    console.log(`uploaded ${file.role} data as ${result.id}`);
    uploaded.push(result.id);
  }
  const suffix = values.suffix as string | undefined;
  const job = await client.createJob({
    model: baseModel,
    training_file: uploaded[0],
    ...(uploaded[1] ? { validation_file: uploaded[1] } : {}),
    ...(suffix ? { suffix } : {}),
    ...(epochs !== undefined ? { hyperparameters: { n_epochs: epochs } } : {}),
  });
  const folder = join(paths.fineTune, safeFolderName(output ?? suffix ?? job.id));
  const record = async (j: FineTuningJob) => {
    await Deno.mkdir(folder, { recursive: true });
    const data = { provider: client.baseUrl, dataset, validation: validation ?? null, ...j };
    await Deno.writeTextFile(join(folder, "job.json"), JSON.stringify(data, null, 2) + "\n");
  };
  await record(job);
  console.log(
    `created fine-tuning job ${job.id} on ${client.baseUrl} (${job.status}); Ctrl-C cancels it`,
  );

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  const signals = Deno.build.os === "windows" ? [] : ["SIGINT" as const, "SIGTERM" as const];
  signals.forEach((s) => Deno.addSignalListener(s, onSigint));
  let final: FineTuningJob;
  try {
    final = await followJob(client, job.id, {
      pollMs,
      signal: stop.signal,
      onStatus: (j) => console.log(`status: ${j.status}`),
      onEvent: (e) =>
        console.log(`  ${new Date(e.created_at * 1000).toISOString().slice(11, 19)} ${e.message}`),
    });
  } catch (err) {
    if (!(err instanceof CancelledError)) throw err;
    const cancelled = await client.cancelJob(job.id);
    await record(cancelled);
    throw new CancelledError(
      `cancelled fine-tuning job ${job.id} on ${client.baseUrl} (status ${cancelled.status}); ` +
        `record in ${folder}`,
    );
  } finally {
    signals.forEach((s) => Deno.removeSignalListener(s, onSigint));
  }
  await record(final);
  if (final.status === "cancelled") {
    throw new CancelledError(`fine-tuning job ${job.id} was cancelled on the provider`);
  }
  if (final.status === "failed" || !final.fine_tuned_model) {
    const why = final.error?.message ?? "the provider gave no reason";
    throw new ServiceError(`fine-tuning job ${job.id} failed: ${why} (record in ${folder})`, {
      code: final.error?.code ?? "fine_tune_failed",
    });
  }
  const entry = await registry.register({
    id: output ?? final.fine_tuned_model,
    path: folder,
    source: "fine-tune",
  });
  console.log(
    `fine-tuned model ${final.fine_tuned_model}` +
      (final.trained_tokens ? ` (${final.trained_tokens} trained tokens)` : "") +
      `; registered as '${entry.id}' (record ${folder})`,
  );
  return 0;
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value.trim() === "") {
    throw new ValidationError(
      `svc llm fine-tune needs --${name}. Run 'svc llm fine-tune --help' for usage.`,
      { param: name },
    );
  }
  return value;
}

async function readDataset(path: string, role: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new NotFoundError(`${role} data file ${path} does not exist`, { param: "dataset" });
    }
    if (err instanceof Deno.errors.IsADirectory) {
      throw new ValidationError(`${role} data ${path} is a folder: give a .jsonl file`);
    }
    throw err;
  }
}

function safeFolderName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "") || "job";
}
