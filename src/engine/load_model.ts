/**
 * Loads a model folder (transformers.js layout) on a chosen device: tokenizer, config and the
 * ONNX session, ready for the chat or embedding engine.
 *
 * @module
 */

import { ServiceError } from "../core/errors.ts";
import { loadRuntime, type ResolvedDevice, type Runtime } from "./runtime.ts";
import { OnnxSession } from "./onnx_session.ts";

/** Weight precision; picks `onnx/model.onnx` (fp32), `model_quantized.onnx` (q8), … */
export type Dtype = "fp32" | "fp16" | "q8" | "q4";

/** The tokenizer methods the engines use (transformers.js' PreTrainedTokenizer). */
export interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  apply_chat_template(
    messages: unknown[],
    options: { tokenize: false; add_generation_prompt: boolean; tools?: unknown },
  ): string;
  chat_template: unknown;
  model_max_length: number;
  eos_token_id?: number;
  pad_token_id?: number;
  bos_token_id?: number;
  all_special_ids: number[];
  get_vocab(): Map<string, number> | Record<string, number>;
}

/** A loaded model. */
export interface LoadedModel {
  folder: string;
  device: ResolvedDevice;
  dtype: Dtype;
  runtime: Runtime;
  tokenizer: Tokenizer;
  session: OnnxSession;
  /** config.json as read by transformers.js. */
  config: Record<string, unknown>;
  /** Reads an optional JSON file of the folder (e.g. generation_config.json); null if absent. */
  readJson(name: string): Promise<Record<string, unknown> | null>;
}

/** Loads `folder` as a causal LM (`chat`) or an encoder (`embedding`). */
export async function loadModel(
  folder: string,
  kind: "chat" | "embedding",
  options: { device: ResolvedDevice; dtype: Dtype },
): Promise<LoadedModel> {
  const runtime = await loadRuntime(options.device);
  const t = runtime.transformers;
  t.env.allowRemoteModels = false;
  t.env.allowLocalModels = true;
  const common = {
    local_files_only: true,
    device: runtime.deviceOption(options.device),
    dtype: options.dtype,
    session_options: runtime.sessionOptions(options.device),
  } as const;
  try {
    const [tokenizer, model] = await Promise.all([
      t.AutoTokenizer.from_pretrained(folder, { local_files_only: true }),
      kind === "chat"
        ? t.AutoModelForCausalLM.from_pretrained(folder, common as never)
        : t.AutoModel.from_pretrained(folder, common as never),
    ]);
    // deno-lint-ignore no-explicit-any
    const sessions = (model as any).sessions as Record<string, unknown>;
    const session = sessions.model ?? sessions.decoder_model_merged;
    if (!session) {
      throw new ServiceError(
        `${folder} has no single ONNX model session (found: ${Object.keys(sessions)})`,
      );
    }
    return {
      folder,
      device: options.device,
      dtype: options.dtype,
      runtime,
      tokenizer: tokenizer as unknown as Tokenizer,
      session: new OnnxSession(session, t.Tensor),
      // deno-lint-ignore no-explicit-any
      config: { ...(model as any).config },
      readJson: async (name) => {
        try {
          return JSON.parse(await Deno.readTextFile(`${folder}/${name}`));
        } catch (err) {
          if (err instanceof Deno.errors.NotFound) return null;
          throw err;
        }
      },
    };
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    throw new ServiceError(
      `could not load the ${kind} model in ${folder} (${options.device}, ${options.dtype}): ` +
        `${err instanceof Error ? err.message : err}. If it is not a ${kind} model, say which ` +
        `kind it is (--kind chat|embedding); if the weights file is missing, try another --dtype.`,
      { cause: err },
    );
  }
}
