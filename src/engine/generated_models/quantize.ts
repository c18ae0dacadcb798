/**
 * The q8 graph pieces: int8 weights (symmetric, one scale per tensor) times activations quantized
 * per token row (symmetric, one scale per row, shifted to uint8 with zero point 128), multiplied
 * with the standard `MatMulInteger` op that ONNX Runtime's CPU kernels run as an int8 GEMM.
 *
 * Per-row activation scales (rather than `DynamicQuantizeLinear`'s one scale per tensor) keep a
 * token's result independent of the other rows in the batch, so batched and single runs agree
 * exactly as they do in fp32.
 *
 * @module
 */

import type { OnnxGraph } from "./onnx_graph.ts";
import { TensorDataType } from "./onnx_proto.ts";

/** An activation tensor quantized per row. */
export interface QuantizedActivation {
  /** uint8 values, `round(x / scale) + 128`. */
  values: string;
  /** float scale per row, shape `[..., 1]`. */
  scale: string;
}

/**
 * Quantizes `x` (float, `[..., K]`) per row along its last axis.
 *
 * @example
 * ```ts
 * import { OnnxGraph } from "./onnx_graph.ts";
 * import { TensorDataType } from "./onnx_proto.ts";
 * const g = new OnnxGraph("q");
 * const x = g.input("x", TensorDataType.FLOAT, ["n", 8]);
 * const q = quantizeRows(g, x); // q.values: uint8 tensor name, q.scale: per-row scales
 * ```
 */
export function quantizeRows(g: OnnxGraph, x: string): QuantizedActivation {
  const amax = g.node("ReduceMax", [g.node("Abs", [x])], { axes: [-1], keepdims: 1 });
  // A zero row would give scale 0 and NaN; the floor keeps it finite (the row quantizes to 0).
  const scale = g.node("Div", [
    g.node("Max", [amax, g.constFloat([1e-12], true)]),
    g.constFloat([127], true),
  ]);
  const shifted = g.node("Add", [
    g.node("Round", [g.node("Div", [x, scale])]),
    g.constFloat([128], true),
  ]);
  const clipped = g.node("Clip", [shifted, g.constFloat([0], true), g.constFloat([255], true)]);
  const values = g.node("Cast", [clipped], { to: TensorDataType.UINT8 });
  return { values, scale };
}

/**
 * `x @ W` with `x` quantized per row and `W` an int8 tensor `[K, N]` with scale `weightScale`.
 * Returns the float result `[..., N]`.
 */
export function int8MatMul(
  g: OnnxGraph,
  x: QuantizedActivation,
  weight: string,
  weightScale: number,
): string {
  const acc = g.node("MatMulInteger", [x.values, weight, g.constUint8(128)]);
  const rowScale = g.node("Mul", [x.scale, g.constFloat([weightScale], true)]);
  return g.node("Mul", [g.node("Cast", [acc], { to: TensorDataType.FLOAT }), rowScale]);
}
