/**
 * The demo models: generated model folders with RANDOM weights that the engine materializes into
 * its cache on first use, so Svc runs (tests, demos, benchmarks) without downloading anything.
 *
 * | id                | shape                                                          |
 * | ----------------- | -------------------------------------------------------------- |
 * | `demo/chat`       | tiny LLaMA decoder (hidden 64, 2 layers), ends replies early    |
 * | `demo/embed`      | tiny BERT encoder (hidden 64, 2 layers), mean pooling          |
 * | `demo/chat-bench` | SmolLM2-135M shape (hidden 576, 30 layers, 9/3 heads, vocab 49152) |
 * | `demo/embed-bench`| all-MiniLM-L6-v2 shape (hidden 384, 6 layers, vocab 30522)      |
 * | `demo/rerank`     | tiny BERT cross-encoder (hidden 64, 2 layers), one-logit head   |
 *
 * Each folder holds fp32 (`onnx/model.onnx`) and q8 (`onnx/model_quantized.onnx`) weights (the
 * chat benchmark model q4, `onnx/model_q4.onnx`, too) and a `svc_demo.json` stamp; a stamp from
 * another generator version means the folder is rebuilt.
 *
 * @module
 */

import { join } from "node:path";
import { ValidationError } from "../../core/errors.ts";
import type { BertEncoderSpec } from "./bert_encoder.ts";
import type { WeightFormat } from "./layers.ts";
import {
  type DecoderFolderSpec,
  MODEL_GENERATOR_VERSION,
  writeDecoderFolder,
  writeEncoderFolder,
} from "./model_folder.ts";
import { writeRerankerFolder } from "./reranker_folder.ts";

/** The demo model ids. */
export const DEMO_MODEL_IDS = [
  "demo/chat",
  "demo/embed",
  "demo/chat-bench",
  "demo/embed-bench",
  "demo/rerank",
] as const;
/** One of {@link DEMO_MODEL_IDS}. */
export type DemoModelId = typeof DEMO_MODEL_IDS[number];

/** What a demo model is and how it is generated. */
export type DemoModelSpec =
  | { kind: "chat"; description: string; spec: DecoderFolderSpec; formats?: WeightFormat[] }
  | { kind: "embedding" | "rerank"; description: string; spec: BertEncoderSpec };

const TINY_CHAT: DecoderFolderSpec = {
  vocabSize: 4096,
  hiddenSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 128,
  maxPositions: 2048,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  // An untied head: with random weights a tied one makes greedy decoding repeat one token forever.
  tieWordEmbeddings: false,
  logitStd: 3,
  // EOS wins about 1 step in 20 under greedy decoding: replies end after a few dozen tokens.
  eosLogitBias: 6,
  numLogitsToKeep: true,
  seed: 20240601,
};

/** Shapes and seeds of the demo models. */
export const DEMO_MODEL_SPECS: Readonly<Record<DemoModelId, DemoModelSpec>> = {
  "demo/chat": {
    kind: "chat",
    description: "tiny LLaMA-shaped chat model with random weights (tests and demos)",
    spec: TINY_CHAT,
  },
  "demo/embed": {
    kind: "embedding",
    description: "tiny BERT-shaped embedding model with random weights (tests and demos)",
    spec: {
      vocabSize: 4096,
      hiddenSize: 64,
      numLayers: 2,
      numHeads: 4,
      intermediateSize: 256,
      maxPositions: 256,
      typeVocabSize: 2,
      layerNormEps: 1e-12,
      seed: 20240602,
    },
  },
  "demo/chat-bench": {
    kind: "chat",
    description: "SmolLM2-135M-shaped chat model with random weights (benchmarks)",
    // q4 as well: the fastest CPU format for decoding (bench/decode_formats.ts).
    formats: ["fp32", "q8", "q4"],
    spec: {
      ...TINY_CHAT,
      vocabSize: 49152,
      hiddenSize: 576,
      numLayers: 30,
      numHeads: 9,
      numKvHeads: 3,
      intermediateSize: 1536,
      maxPositions: 8192,
      ropeTheta: 100000,
      // No early EOS: benchmark generations run to max_tokens.
      eosLogitBias: 0,
      seed: 20240603,
    },
  },
  "demo/rerank": {
    kind: "rerank",
    description: "tiny BERT cross-encoder (reranker) with random weights (tests and demos)",
    spec: {
      vocabSize: 4096,
      hiddenSize: 64,
      numLayers: 2,
      numHeads: 4,
      intermediateSize: 256,
      maxPositions: 512,
      typeVocabSize: 2,
      layerNormEps: 1e-12,
      seed: 20240605,
    },
  },
  "demo/embed-bench": {
    kind: "embedding",
    description: "all-MiniLM-L6-v2-shaped embedding model with random weights (benchmarks)",
    spec: {
      vocabSize: 30522,
      hiddenSize: 384,
      numLayers: 6,
      numHeads: 12,
      intermediateSize: 1536,
      maxPositions: 512,
      typeVocabSize: 2,
      layerNormEps: 1e-12,
      seed: 20240604,
    },
  },
};

/**
 * True when `id` names a demo model.
 *
 * @example
 * ```ts
 * isDemoModelId("demo/chat"); // true
 * ```
 */
export function isDemoModelId(id: string): id is DemoModelId {
  return (DEMO_MODEL_IDS as readonly string[]).includes(id);
}

/** The folder a demo model lives in under `cacheDir`: `<cacheDir>/demo/<name>`. */
export function demoModelFolder(id: DemoModelId, cacheDir: string): string {
  return join(cacheDir, ...id.split("/"));
}

/**
 * The weight formats (transformers.js dtypes) demo model `id` is generated with: `fp32` and `q8`,
 * and `q4` for the chat benchmark model.
 *
 * @example
 * ```ts
 * demoModelDtypes("demo/chat"); // ["fp32", "q8"]
 * ```
 */
export function demoModelDtypes(id: DemoModelId): readonly WeightFormat[] {
  const demo = DEMO_MODEL_SPECS[id];
  return (demo.kind === "chat" ? demo.formats : undefined) ?? ["fp32", "q8"];
}

const STAMP_FILE = "svc_demo.json";

function stampOf(id: DemoModelId): string {
  const demo = DEMO_MODEL_SPECS[id];
  const { kind, spec } = demo;
  const formats = demo.kind === "chat" ? demo.formats : undefined;
  return JSON.stringify(
    { id, kind, generator_version: MODEL_GENERATOR_VERSION, spec, ...(formats && { formats }) },
    null,
    2,
  ) + "\n";
}

async function hasCurrentStamp(folder: string, stamp: string): Promise<boolean> {
  try {
    return (await Deno.readTextFile(join(folder, STAMP_FILE))) === stamp;
  } catch {
    return false;
  }
}

/**
 * True when `<cacheDir>/demo/<name>` holds a copy of demo model `id` from this generator version,
 * which {@link materializeDemoModel} then uses as it is.
 */
export function isDemoModelCurrent(id: DemoModelId, cacheDir: string): Promise<boolean> {
  return hasCurrentStamp(demoModelFolder(id, cacheDir), stampOf(id));
}

const inFlight = new Map<string, Promise<string>>();

/**
 * Writes demo model `id` into `<cacheDir>/demo/<name>` unless a current copy is there, and returns
 * the folder. The folder is built under a temporary name and renamed into place, so a crash or a
 * concurrent process never leaves a half-written model; calls for the same folder share one build.
 *
 * @example
 * ```ts
 * const folder = await materializeDemoModel("demo/embed", "/tmp/svc-cache");
 * // folder === "/tmp/svc-cache/demo/embed"; load it with transformers.js (random weights!)
 * ```
 */
export function materializeDemoModel(id: string, cacheDir: string): Promise<string> {
  if (!isDemoModelId(id)) {
    return Promise.reject(
      new ValidationError(`'${id}' is not a demo model: use one of ${DEMO_MODEL_IDS.join(", ")}`, {
        param: "model",
      }),
    );
  }
  const folder = demoModelFolder(id, cacheDir);
  let job = inFlight.get(folder);
  if (!job) {
    job = build(id, folder).finally(() => inFlight.delete(folder));
    inFlight.set(folder, job);
  }
  return job;
}

async function build(id: DemoModelId, folder: string): Promise<string> {
  const stamp = stampOf(id);
  if (await hasCurrentStamp(folder, stamp)) return folder;
  const parent = join(folder, "..");
  await Deno.mkdir(parent, { recursive: true });
  const name = folder.slice(parent.length + 1);
  await removeStaleBuilds(parent, `.${name}.tmp-`);
  const tmp = await Deno.makeTempDir({ dir: parent, prefix: `.${name}.tmp-` });
  try {
    if (Deno.build.os !== "windows") await Deno.chmod(tmp, 0o755);
    const demo = DEMO_MODEL_SPECS[id];
    if (demo.kind === "chat") {
      await writeDecoderFolder(tmp, demo.spec, { id, formats: demo.formats });
    } else if (demo.kind === "rerank") await writeRerankerFolder(tmp, demo.spec, { id });
    else await writeEncoderFolder(tmp, demo.spec, { id });
    await Deno.writeTextFile(join(tmp, STAMP_FILE), stamp);
    await replaceFolder(tmp, folder, stamp);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return folder;
}

/** A build folder untouched this long was left by a process that died (a build takes seconds). */
const STALE_BUILD_MS = 60 * 60 * 1000;

/**
 * Removes build folders of `parent` named `prefix…` that no process has touched for an hour: a
 * process killed while it built a model (a second Ctrl-C) leaves its folder, hundreds of MB.
 */
async function removeStaleBuilds(parent: string, prefix: string): Promise<void> {
  for await (const entry of Deno.readDir(parent)) {
    if (!entry.isDirectory || !entry.name.startsWith(prefix)) continue;
    const path = join(parent, entry.name);
    const changed = (await Deno.stat(path).catch(() => null))?.mtime?.getTime();
    if (changed !== undefined && Date.now() - changed > STALE_BUILD_MS) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    }
  }
}

/** Moves `tmp` to `folder`, setting an outdated `folder` aside first. */
async function replaceFolder(tmp: string, folder: string, stamp: string): Promise<void> {
  for (let attempt = 0;; attempt++) {
    try {
      await Deno.rename(tmp, folder);
      return;
    } catch (err) {
      // Another process may have finished the same model meanwhile: then use theirs.
      if (await hasCurrentStamp(folder, stamp)) return;
      if (attempt > 0 || !(err instanceof Deno.errors.AlreadyExists || isNotEmpty(err))) throw err;
    }
    const old = `${tmp}.old`;
    await Deno.rename(folder, old);
    await Deno.remove(old, { recursive: true });
  }
}

function isNotEmpty(err: unknown): boolean {
  return err instanceof Error && /not empty|ENOTEMPTY|os error 39/i.test(err.message);
}
