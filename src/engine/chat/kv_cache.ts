/**
 * Key/value cache bookkeeping for batched decoding.
 *
 * Each cache tensor has the layout `[batch, kvHeads, length, headDim]`. Sequences of different
 * lengths share one batch by left padding: a sequence with `n` cached tokens occupies the last `n`
 * columns of its row, and the attention mask hides the columns before them. The cache is rebuilt
 * (copied) only when the batch changes, so a steady batch feeds each step's `present` outputs
 * straight back as the next step's `past` inputs.
 *
 * @module
 */

/** Element storage of a cache tensor (float32, or float16 kept as raw bits). */
export type CacheArray = Float32Array | Uint16Array;

/** One cache tensor `[batch, heads, length, headDim]`. */
export interface CacheTensor {
  data: CacheArray;
  /** `[batch, heads, length, headDim]`. */
  dims: readonly [number, number, number, number];
}

/** Where one sequence's cached tokens are: row `row` of `layers`, its last `length` columns. */
export interface CacheSlice {
  /** One tensor per cache input, in the model's input order (layer0.key, layer0.value, …). */
  layers: readonly CacheTensor[];
  row: number;
  length: number;
}

/**
 * Builds a new left-padded batch cache from slices of existing caches. Row `i` of the result holds
 * `slices[i]`, right-aligned to the longest slice (so padding is as short as it can be). One slice
 * that is a whole cache of one row is that cache itself, not a copy.
 */
export function assembleCache(slices: readonly CacheSlice[]): CacheTensor[] {
  if (slices.length === 0) throw new RangeError("assembleCache needs at least one slice");
  const [first] = slices;
  const [rows, , width] = first.layers[0].dims;
  if (slices.length === 1 && rows === 1 && first.length === width) return [...first.layers];
  const length = Math.max(...slices.map((s) => s.length));
  const batch = slices.length;
  return slices[0].layers.map((template, layer) => {
    const [, heads, , headDim] = template.dims;
    const Ctor = template.data.constructor as new (n: number) => CacheArray;
    const data = new Ctor(batch * heads * length * headDim);
    slices.forEach((slice, row) => {
      const src = slice.layers[layer];
      const srcLength = src.dims[2];
      const count = slice.length * headDim;
      for (let h = 0; h < heads; h++) {
        const from = ((slice.row * heads + h) * srcLength + (srcLength - slice.length)) * headDim;
        const to = ((row * heads + h) * length + (length - slice.length)) * headDim;
        data.set(src.data.subarray(from, from + count), to);
      }
    });
    return { data, dims: [batch, heads, length, headDim] as const };
  });
}

/**
 * The attention mask for a left-padded batch: row `i` has `length - lengths[i]` zeros followed by
 * ones, plus `extra` ones for the tokens being fed in this step.
 */
export function leftPaddedMask(lengths: readonly number[], length: number, extra: number): {
  data: BigInt64Array;
  dims: [number, number];
} {
  const width = length + extra;
  const data = new BigInt64Array(lengths.length * width);
  lengths.forEach((n, row) => data.fill(1n, row * width + (length - n), (row + 1) * width));
  return { data, dims: [lengths.length, width] };
}
