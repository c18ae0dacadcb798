/**
 * Layer helpers shared by the generated encoder and decoder: linear layers and embeddings in fp32
 * or q8, norms and activations, each emitting standard ONNX (opset 17) ops into an
 * {@link OnnxGraph} with deterministic random weights.
 *
 * @module
 */

import type { OnnxGraph } from "./onnx_graph.ts";
import { int8MatMul, type QuantizedActivation, quantizeRows } from "./quantize.ts";
import { emitMatMulNBits, type NBitsOptions } from "./weight_formats.ts";
import { quantizedUniformTensor, uniformTensor, uniformValuesInPieces } from "./weights.ts";

/**
 * Weight precision of a generated model file: float, int8 per tensor (`MatMulInteger`), or
 * 4-bit blocks (`MatMulNBits`, int8 compute: accuracy level 4) as real q4 exports ship them.
 */
export type WeightFormat = "fp32" | "q8" | "q4";

/** The `MatMulNBits` settings of the q4 format (benchmarks try others). */
export const Q4_NBITS: NBitsOptions = { bits: 4, accuracyLevel: 4 };

/** Options of {@link LayerBuilder.linear}. */
export interface LinearOptions {
  /** Half-width of the uniform weight range; default `sqrt(3 / inDim)` (unit variance out). */
  bound?: number;
  /** Add a bias vector with this half-width (BERT); none when undefined. */
  biasBound?: number;
}

/**
 * Emits layers with named random weights into a graph.
 *
 * @example
 * ```ts
 * import { OnnxGraph } from "./onnx_graph.ts";
 * import { TensorDataType } from "./onnx_proto.ts";
 * const g = new OnnxGraph("mlp");
 * const x = g.input("x", TensorDataType.FLOAT, ["n", 16]);
 * const layers = new LayerBuilder(g, { seed: "1", format: "q8" });
 * const y = layers.linear(x, "fc", 16, 4);
 * ```
 */
export class LayerBuilder {
  readonly graph: OnnxGraph;
  readonly format: WeightFormat;
  #seed: string;
  #quantized = new Map<string, QuantizedActivation>();
  #int8Scales = new Map<string, number>();
  #nbits: NBitsOptions;

  constructor(
    graph: OnnxGraph,
    options: { seed: string; format: WeightFormat; nbits?: NBitsOptions },
  ) {
    this.graph = graph;
    this.format = options.format;
    this.#seed = options.seed;
    this.#nbits = options.nbits ?? Q4_NBITS;
  }

  #spec(name: string, dims: number[], bound: number, center = 0) {
    return { seed: `${this.#seed}:${name}`, dims, bound, center };
  }

  /** A float32 weight (kept fp32 in q8 files too: norms, biases, small tables). */
  floatWeight(name: string, dims: number[], bound: number, center = 0): string {
    return this.graph.initializer(name, uniformTensor(this.#spec(name, dims, bound, center)));
  }

  /** An int8 weight; its scale is remembered for {@link LayerBuilder.int8Scale}. */
  int8Weight(name: string, dims: number[], bound: number): string {
    const q = quantizedUniformTensor(this.#spec(name, dims, bound));
    this.#int8Scales.set(name, q.scale);
    return this.graph.initializer(name, q.source);
  }

  /** The scale of an int8 weight added with {@link LayerBuilder.int8Weight}. */
  int8Scale(name: string): number {
    const s = this.#int8Scales.get(name);
    if (s === undefined) throw new Error(`no int8 weight named ${name}`);
    return s;
  }

  /** The activation `x` quantized per row, computed once per tensor and shared by its users. */
  quantized(x: string): QuantizedActivation {
    let q = this.#quantized.get(x);
    if (!q) {
      q = quantizeRows(this.graph, x);
      this.#quantized.set(x, q);
    }
    return q;
  }

  /** `x @ W (+ b)` with `W` of shape `[inDim, outDim]`. */
  linear(x: string, name: string, inDim: number, outDim: number, opts: LinearOptions = {}): string {
    const g = this.graph;
    const bound = opts.bound ?? Math.sqrt(3 / inDim);
    let y: string;
    if (this.format === "q8") {
      const w = this.int8Weight(`${name}.weight`, [inDim, outDim], bound);
      y = int8MatMul(g, this.quantized(x), w, this.int8Scale(w));
    } else if (this.format === "q4") {
      // Drawn when the file is written (see emitMatMulNBits), not held by the graph.
      const spec = this.#spec(`${name}.weight`, [inDim, outDim], bound);
      const w = () => uniformValuesInPieces(spec);
      y = emitMatMulNBits(g, g, x, `${name}.weight`, w, inDim, outDim, this.#nbits);
    } else {
      y = g.node("MatMul", [x, this.floatWeight(`${name}.weight`, [inDim, outDim], bound)]);
    }
    if (opts.biasBound !== undefined) {
      y = g.node("Add", [y, this.floatWeight(`${name}.bias`, [outDim], opts.biasBound)]);
    }
    return y;
  }

  /**
   * Looks up rows of an embedding table `[rows, dim]`: int8 with one scale in q8 files, float in
   * fp32 and q4 files (as real q4 exports keep it).
   */
  embedding(
    ids: string,
    name: string,
    rows: number,
    dim: number,
    options: { bound: number; quantize?: boolean },
  ): string {
    const g = this.graph;
    if (this.format === "q8" && options.quantize !== false) {
      const table = this.int8Weight(name, [rows, dim], options.bound);
      const picked = g.node("Cast", [g.node("Gather", [table, ids])], { to: 1 });
      return g.node("Mul", [picked, g.constFloat([this.int8Scale(table)], true)]);
    }
    return g.node("Gather", [this.floatWeight(name, [rows, dim], options.bound), ids]);
  }

  /**
   * `x @ E^T` for an embedding table `E` `[rows, dim]` added before (tied output head). The
   * transpose of a constant is folded by ONNX Runtime when the session is created.
   */
  tiedHead(x: string, table: string): string {
    const g = this.graph;
    if (this.format === "q4") throw new Error("q4 files of tied heads are not generated");
    const transposed = g.node("Transpose", [table], { perm: [1, 0] });
    if (this.format === "q8") {
      return int8MatMul(g, this.quantized(x), transposed, this.int8Scale(table));
    }
    return g.node("MatMul", [x, transposed]);
  }

  /** RMSNorm over the last axis (LLaMA): `x / sqrt(mean(x^2) + eps) * w`. */
  rmsNorm(x: string, name: string, dim: number, eps: number): string {
    const g = this.graph;
    const ms = g.node("ReduceMean", [g.node("Pow", [x, g.constFloat([2], true)])], {
      axes: [-1],
      keepdims: 1,
    });
    const rms = g.node("Sqrt", [g.node("Add", [ms, g.constFloat([eps], true)])]);
    const w = this.floatWeight(`${name}.weight`, [dim], 0.1, 1);
    return g.node("Mul", [g.node("Div", [x, rms]), w]);
  }

  /** LayerNorm over the last axis (BERT), with random scale near 1 and bias near 0. */
  layerNorm(x: string, name: string, dim: number, eps: number): string {
    const g = this.graph;
    const gamma = this.floatWeight(`${name}.weight`, [dim], 0.1, 1);
    const beta = this.floatWeight(`${name}.bias`, [dim], 0.05);
    return g.node("LayerNormalization", [x, gamma, beta], { axis: -1, epsilon: { float: eps } });
  }

  /** Exact GELU, `0.5 x (1 + erf(x / sqrt 2))`. */
  gelu(x: string): string {
    const g = this.graph;
    const erf = g.node("Erf", [g.node("Div", [x, g.constFloat([Math.SQRT2], true)])]);
    const inner = g.node("Mul", [x, g.node("Add", [erf, g.constFloat([1], true)])]);
    return g.node("Mul", [inner, g.constFloat([0.5], true)]);
  }

  /** SiLU, `x * sigmoid(x)`. */
  silu(x: string): string {
    return this.graph.node("Mul", [x, this.graph.node("Sigmoid", [x])]);
  }

  /** `[B, S, heads * headDim]` → `[B, heads, S, headDim]`. */
  splitHeads(x: string, heads: number, headDim: number): string {
    const g = this.graph;
    const r = g.node("Reshape", [x, g.constInt64([0, 0, heads, headDim])]);
    return g.node("Transpose", [r], { perm: [0, 2, 1, 3] });
  }

  /** `[B, heads, S, headDim]` → `[B, S, heads * headDim]`. */
  mergeHeads(x: string, heads: number, headDim: number): string {
    const g = this.graph;
    const t = g.node("Transpose", [x], { perm: [0, 2, 1, 3] });
    return g.node("Reshape", [t, g.constInt64([0, 0, heads * headDim])]);
  }
}
