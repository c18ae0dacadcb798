/**
 * sentence-transformers `Dense` modules (`N_Dense/config.json` + `N_Dense/model.safetensors`):
 * `y = activation(W x + b)` with `linear.weight` `[out, in]` and optional `linear.bias`, applied to
 * the pooled vector when the ONNX export does not include them.
 *
 * @module
 */

import { readSafetensors } from "./safetensors.ts";

/** One Dense layer, weights as float32. */
export interface DenseLayer {
  /** Module folder, e.g. `2_Dense`. */
  path: string;
  inFeatures: number;
  outFeatures: number;
  /** `[out, in]`, row-major. */
  weight: Float32Array;
  bias: Float32Array | null;
  activation: "identity" | "tanh";
}

/** The module's `config.json` fields we use. */
export interface DenseConfig {
  in_features?: number;
  out_features?: number;
  bias?: boolean;
  activation_function?: string;
}

/**
 * Reads one Dense module from its config and safetensors bytes (null when the folder has no
 * `model.safetensors`, e.g. only `pytorch_model.bin`). Throws on what we cannot run.
 */
export function parseDenseLayer(
  path: string,
  config: DenseConfig,
  safetensors: Uint8Array,
): DenseLayer {
  const inFeatures = Number(config.in_features);
  const outFeatures = Number(config.out_features);
  if (!(inFeatures > 0 && outFeatures > 0)) {
    throw new Error(`${path}/config.json lacks in_features/out_features`);
  }
  const act = config.activation_function ?? "torch.nn.modules.linear.Identity";
  const activation = act.endsWith(".Tanh") || act === "Tanh"
    ? "tanh"
    : act.endsWith(".Identity") || act === "Identity"
    ? "identity"
    : null;
  if (!activation) {
    throw new Error(
      `${path}: activation ${act} is not supported (Identity and Tanh are)`,
    );
  }
  const tensors = readSafetensors(safetensors);
  const weight = tensors.get("linear.weight");
  if (!weight || weight.shape[0] !== outFeatures || weight.shape[1] !== inFeatures) {
    throw new Error(
      `${path}/model.safetensors needs linear.weight of shape [${outFeatures}, ${inFeatures}]` +
        (weight ? `, found [${weight.shape}]` : ""),
    );
  }
  const bias = tensors.get("linear.bias")?.data ?? null;
  if (config.bias !== false && config.bias !== undefined && !bias) {
    throw new Error(`${path}/model.safetensors lacks linear.bias, which its config asks for`);
  }
  if (bias && bias.length !== outFeatures) {
    throw new Error(`${path}/model.safetensors: linear.bias has ${bias.length} values`);
  }
  return { path, inFeatures, outFeatures, weight: weight.data, bias, activation };
}

/** Applies one Dense layer to a vector. */
export function applyDense(layer: DenseLayer, x: Float32Array): Float32Array {
  if (x.length !== layer.inFeatures) {
    throw new Error(`${layer.path} takes ${layer.inFeatures} values, got ${x.length}`);
  }
  const { inFeatures: n, outFeatures: m, weight, bias } = layer;
  const y = new Float32Array(m);
  for (let o = 0; o < m; o++) {
    let sum = bias ? bias[o] : 0;
    const row = o * n;
    for (let k = 0; k < n; k++) sum += weight[row + k] * x[k];
    y[o] = layer.activation === "tanh" ? Math.tanh(sum) : sum;
  }
  return y;
}
