/**
 * Token counting for dataset validation with the base model's own tokenizer, when the model is
 * on this machine (registered, a demo model, in the hub cache, or a folder), through
 * transformers.js' AutoTokenizer; otherwise a clearly labelled approximation.
 *
 * @module
 */

import { join } from "node:path";
import type { OutputPaths } from "../config/output_paths.ts";
import type { ModelRegistry } from "../core/model_registry.ts";
import { SnapshotCache } from "../engine/hub/snapshot.ts";
import { isDemoModelId, materializeDemoModel } from "../engine/generated_models/demo_models.ts";
import { loadRuntime } from "../engine/runtime.ts";
import {
  approximateTokenCounter,
  type DatasetMessage,
  type TokenCounter,
} from "./fine_tune_dataset.ts";

/** What {@link loadTokenCounter} found. */
export interface BaseModelTokens {
  counter: TokenCounter;
  /** The model's context in tokens, from its config; null when unknown. */
  contextLength: number | null;
  /** The local folder used, when one was. */
  folder: string | null;
}

interface Tokenizer {
  encode(text: string): number[];
  apply_chat_template(messages: unknown[], options: Record<string, unknown>): unknown;
  chat_template?: unknown;
}

/**
 * A token counter for `baseModel`: its tokenizer (chat template included) when a local copy
 * exists and native modules may load (`--allow-ffi`), else the approximation, saying why.
 */
export async function loadTokenCounter(
  baseModel: string,
  options: { paths: OutputPaths; registry: ModelRegistry },
): Promise<BaseModelTokens> {
  const folder = await findLocalFolder(baseModel, options);
  if (folder === null) {
    return {
      counter: approximateTokenCounter(`no local copy of ${baseModel}`),
      contextLength: null,
      folder: null,
    };
  }
  const contextLength = await readContextLength(folder);
  if ((await Deno.permissions.query({ name: "ffi" })).state !== "granted") {
    return {
      counter: approximateTokenCounter(
        `run with --allow-ffi to load the ${baseModel} tokenizer`,
      ),
      contextLength,
      folder,
    };
  }
  const runtime = await loadRuntime("cpu");
  const tokenizer = await runtime.transformers.AutoTokenizer.from_pretrained(folder, {
    local_files_only: true,
  }) as unknown as Tokenizer;
  const hasTemplate = tokenizer.chat_template !== undefined && tokenizer.chat_template !== null;
  return {
    counter: {
      exact: true,
      label: `the ${baseModel} tokenizer${hasTemplate ? " and chat template" : ""}`,
      count: (messages) => countTokens(tokenizer, messages, hasTemplate),
    },
    contextLength,
    folder,
  };
}

function countTokens(tokenizer: Tokenizer, messages: DatasetMessage[], template: boolean): number {
  if (template) {
    try {
      const out = tokenizer.apply_chat_template(messages, { tokenize: true, return_dict: false });
      const length = tokenLength(out);
      if (length !== null) return length;
    } catch {
      // Templates may reject some shapes (tool calls): count message by message instead.
    }
  }
  // Without a template: the text plus a few marker tokens per message.
  return messages.reduce((sum, m) => sum + tokenizer.encode(m.content).length + 4, 0);
}

function tokenLength(out: unknown): number | null {
  if (Array.isArray(out)) return Array.isArray(out[0]) ? out[0].length : out.length;
  const ids = (out as { input_ids?: unknown } | null)?.input_ids;
  if (Array.isArray(ids)) return tokenLength(ids);
  const dims = (ids as { dims?: number[] } | undefined)?.dims ??
    (out as { dims?: number[] } | null)?.dims;
  return Array.isArray(dims) ? dims[dims.length - 1] : null;
}

async function findLocalFolder(
  baseModel: string,
  options: { paths: OutputPaths; registry: ModelRegistry },
): Promise<string | null> {
  const candidates: (() => Promise<string | null>)[] = [
    async () => (await options.registry.get(baseModel))?.path ?? null,
    async () =>
      isDemoModelId(baseModel) ? await materializeDemoModel(baseModel, options.paths.hub) : null,
    async () => {
      const cache = new SnapshotCache(options.paths.hub, baseModel);
      const commit = await cache.readRef("main") ?? "main";
      return cache.snapshotDir(commit);
    },
    () => Promise.resolve(baseModel),
  ];
  for (const candidate of candidates) {
    try {
      const folder = await candidate();
      if (folder !== null && await exists(join(folder, "tokenizer.json"))) return folder;
    } catch {
      // not this kind of id (e.g. no org/name): try the next place
    }
  }
  return null;
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

async function readContextLength(folder: string): Promise<number | null> {
  const read = async (name: string): Promise<Record<string, unknown>> => {
    try {
      return JSON.parse(await Deno.readTextFile(join(folder, name)));
    } catch {
      return {};
    }
  };
  const config = await read("config.json");
  for (const key of ["max_position_embeddings", "n_positions", "max_seq_len", "seq_length"]) {
    const value = config[key];
    if (typeof value === "number" && value > 0) return value;
  }
  const tokenizerConfig = await read("tokenizer_config.json");
  const max = tokenizerConfig.model_max_length;
  // Tokenizers without a limit store a huge sentinel (1e30).
  return typeof max === "number" && max > 0 && max < 1e7 ? max : null;
}
