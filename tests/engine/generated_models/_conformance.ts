// Shared by the decoder conformance tests (native cpu in-process, wasm in a subprocess): loads one
// case folder in one dtype with transformers.js, checks the session's signature, generates
// greedily and checks that decoding with the cache picks the argmax of full forward passes.
import type { Transformers } from "../../../src/engine/runtime.ts";
import {
  DECODER_CASES,
  type DecoderCase,
} from "../../../fixtures/generated_models/conformance_decoders.ts";
import { float16Io } from "../../../fixtures/generated_models/conformance_decoder_graph.ts";
import {
  EXPORT_DTYPE_SUFFIX,
  type ExportDtype,
} from "../../../src/engine/generated_models/weight_formats.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const VOCAB = 4096;
const NEW_TOKENS = 6;
const PROMPT = "Tell me a long story about dragons and castles, please.";

/**
 * How far a generated token's full-pass logit may sit below the full pass's best one. fp32
 * compute agrees to float noise; float16 logits are rounded (~0.008 at 8); the 8-bit files
 * quantize activations per tensor (`DynamicQuantizeLinear`), so a prompt pass and a one-token
 * pass round differently.
 */
export const TOP_TOLERANCE: Record<ExportDtype, number> = {
  fp32: 1e-4,
  q4: 1e-4,
  bnb4: 1e-4,
  fp16: 0.05,
  q4f16: 0.05,
  q8: 0.5,
  int8: 0.5,
  uint8: 0.5,
};

function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

function int64(t: Transformers, row: number[]) {
  return new t.Tensor("int64", BigInt64Array.from(row, BigInt), [1, row.length]);
}

/** What one (case, dtype) check saw. */
export interface CaseReport {
  generated: number[];
  /** Largest gap between a generated token's full-pass logit and the full pass's best logit. */
  worstGap: number;
}

/** `from_pretrained` options for a case and dtype (`web`: pass external data as bytes). */
export async function loadOptions(
  folder: string,
  c: DecoderCase,
  dtype: ExportDtype,
  web: boolean,
): Promise<Record<string, unknown>> {
  const options: Record<string, unknown> = {
    dtype,
    local_files_only: true,
    model_file_name: c.fileName,
  };
  if (web) {
    // As the engine's web runtime (runtime.ts): device "auto" with the WASM provider.
    options.device = "auto";
    const sessionOptions: Record<string, unknown> = { executionProviders: ["wasm"] };
    options.session_options = sessionOptions;
    const file = `${c.fileName}${EXPORT_DTYPE_SUFFIX[dtype]}.onnx`;
    if (c.externalData?.dtypes.includes(dtype)) {
      // onnxruntime-web cannot read files: the data goes in as bytes, under the name the model's
      // initializers give as their location (transformers.js' node build does not do this).
      const path = file + c.externalData.suffix;
      options.use_external_data_format = false;
      sessionOptions.externalData = [{ path, data: await Deno.readFile(`${folder}/onnx/${path}`) }];
    }
  } else {
    options.device = "cpu";
  }
  return options;
}

/**
 * Loads case `name` from `folder` in `dtype`, checks its signature and the cache invariant.
 * Throws on any mismatch.
 */
export async function checkCase(
  t: Transformers,
  folder: string,
  name: string,
  dtype: ExportDtype,
  web = false,
  newTokens = NEW_TOKENS,
): Promise<CaseReport> {
  const c = DECODER_CASES[name];
  const tok = await t.AutoTokenizer.from_pretrained(folder);
  const model: Any = await t.AutoModelForCausalLM.from_pretrained(
    folder,
    await loadOptions(folder, c, dtype, web) as Any,
  );
  try {
    checkSignature(model, c, dtype);
    const text = tok.apply_chat_template([{ role: "user", content: PROMPT }], {
      tokenize: false,
      add_generation_prompt: true,
    }) as string;
    const prompt: number[] = tok.encode(text);
    const seq: Any = await model.generate({
      input_ids: int64(t, prompt),
      attention_mask: int64(t, prompt.map(() => 1)),
      max_new_tokens: newTokens,
      do_sample: false,
    });
    const generated = (seq.tolist()[0] as bigint[]).slice(prompt.length).map(Number);
    if (generated.length === 0) throw new Error("generate() returned no tokens");
    let worstGap = 0;
    for (let k = 0; k < generated.length; k++) {
      const ids = [...prompt, ...generated.slice(0, k)];
      const out: Any = await model({
        input_ids: int64(t, ids),
        attention_mask: int64(t, ids.map(() => 1)),
      });
      const logits = out.logits.to("float32").data as Float32Array;
      if (logits.length !== ids.length * VOCAB && logits.length !== VOCAB) {
        throw new Error(`logits of ${logits.length} values for ${ids.length} positions`);
      }
      const row = logits.subarray(logits.length - VOCAB);
      const gap = row[argmax(row)] - row[generated[k]];
      worstGap = Math.max(worstGap, gap);
      if (gap > TOP_TOLERANCE[dtype]) {
        throw new Error(
          `step ${k}: cached decoding chose ${generated[k]}, the full pass ${argmax(row)} ` +
            `(logit gap ${gap})`,
        );
      }
    }
    return { generated, worstGap };
  } finally {
    await model.dispose();
  }
}

/** The session's inputs and outputs are those of the real exports the case stands for. */
function checkSignature(model: Any, c: DecoderCase, dtype: ExportDtype): void {
  const session = model.sessions.model ?? model.sessions.decoder_model_merged;
  const inputs: string[] = session.inputNames;
  const outputs: string[] = session.outputNames;
  const expectInputs = ["input_ids", "attention_mask"];
  if (c.positionIds) expectInputs.push("position_ids");
  for (let i = 0; i < 2; i++) {
    expectInputs.push(`past_key_values.${i}.key`, `past_key_values.${i}.value`);
  }
  if (c.numLogitsToKeep) expectInputs.push("num_logits_to_keep");
  if (c.merged) expectInputs.push("use_cache_branch");
  const expectOutputs = ["logits"];
  for (let i = 0; i < 2; i++) expectOutputs.push(`present.${i}.key`, `present.${i}.value`);
  const same = (a: string[], b: string[]) => [...a].sort().join() === [...b].sort().join();
  if (!same(inputs, expectInputs)) throw new Error(`inputs ${inputs} != ${expectInputs}`);
  if (!same(outputs, expectOutputs)) throw new Error(`outputs ${outputs} != ${expectOutputs}`);
  const meta: Any[] | undefined = session.inputMetadata;
  if (!meta) throw new Error("the session has no inputMetadata");
  {
    const cacheType = float16Io(c, dtype) ? "float16" : "float32";
    for (const m of meta) {
      const want = m.name.startsWith("past_key_values.")
        ? cacheType
        : m.name === "use_cache_branch"
        ? "bool"
        : "int64";
      if (m.type !== want) throw new Error(`input ${m.name} is ${m.type}, expected ${want}`);
    }
    for (const m of session.outputMetadata ?? []) {
      if (m.type !== cacheType) {
        throw new Error(`output ${m.name} is ${m.type}, expected ${cacheType}`);
      }
    }
  }
}
