// A fake model folder in the transformers.js layout for the download tests: deterministic
// bytes, a few hundred KB, no real ONNX (the downloader never parses the files).
import { dirname, join } from "node:path";

/** Files of the fake model and their sizes in bytes (JSON files get JSON text instead). */
export const FAKE_MODEL_FILES: Record<string, number> = {
  "config.json": 0,
  "generation_config.json": 0,
  "tokenizer.json": 40_000,
  "tokenizer_config.json": 0,
  "special_tokens_map.json": 0,
  "modules.json": 0,
  "1_Pooling/config.json": 0,
  "README.md": 2_000,
  "onnx/model.onnx": 300_000,
  "onnx/model_quantized.onnx": 120_000,
  "onnx/model_fp16.onnx": 50_000,
  "onnx/model_fp16.onnx_data": 250_000,
  "onnx/model_q4.onnx": 90_000,
};

/** Deterministic pseudo-random bytes (xorshift), different per seed. */
export function fakeBytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** Writes the fake model into a new temp folder and returns its path. */
export async function writeFakeModel(seed = 1): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "svc-fake-model-" });
  let i = 0;
  for (const [path, size] of Object.entries(FAKE_MODEL_FILES)) {
    const full = join(dir, path);
    await Deno.mkdir(dirname(full), { recursive: true });
    const data = size === 0
      ? new TextEncoder().encode(JSON.stringify({ file: path, seed }))
      : fakeBytes(size, seed * 100 + i);
    await Deno.writeFile(full, data);
    i++;
  }
  return dir;
}

/** True when a path exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}
