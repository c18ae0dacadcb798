/**
 * Builder of the embeddings `list` response, and the base64 codec of float32 vectors the official
 * SDKs use (little-endian float32 bytes, base64-encoded).
 *
 * @module
 */
import type { EncodingFormat } from "./embedding_request.ts";

/** The embeddings response. */
export interface EmbeddingList {
  object: "list";
  data: { object: "embedding"; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/**
 * Encodes a vector as base64 of its little-endian float32 bytes.
 *
 * @example
 * ```ts
 * import { encodeFloat32Base64 } from "./embedding_response.ts";
 * encodeFloat32Base64(new Float32Array([1])); // "AACAPw=="
 * ```
 */
export function encodeFloat32Base64(vector: Float32Array | readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i], true);
  let binary = "";
  // Chunked so String.fromCharCode never gets more arguments than the engine allows.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * Decodes {@link encodeFloat32Base64}'s output (what the SDKs do on receipt).
 *
 * @example
 * ```ts
 * import { decodeFloat32Base64 } from "./embedding_response.ts";
 * decodeFloat32Base64("AACAPw=="); // Float32Array [1]
 * ```
 */
export function decodeFloat32Base64(text: string): Float32Array {
  const binary = atob(text);
  if (binary.length % 4 !== 0) {
    throw new RangeError(`base64 vector has ${binary.length} bytes, not a multiple of 4`);
  }
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) view.setUint8(i, binary.charCodeAt(i));
  const out = new Float32Array(binary.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/**
 * Builds the embeddings response: one entry per vector, in input order.
 *
 * @example
 * ```ts
 * import { buildEmbeddingList } from "./embedding_response.ts";
 * buildEmbeddingList("m", [new Float32Array([0.6, 0.8])], { promptTokens: 2 });
 * ```
 */
export function buildEmbeddingList(
  model: string,
  vectors: readonly Float32Array[],
  options: { promptTokens: number; encodingFormat?: EncodingFormat },
): EmbeddingList {
  const base64 = options.encodingFormat === "base64";
  return {
    object: "list",
    data: vectors.map((v, index) => ({
      object: "embedding",
      index,
      embedding: base64 ? encodeFloat32Base64(v) : Array.from(v),
    })),
    model,
    usage: { prompt_tokens: options.promptTokens, total_tokens: options.promptTokens },
  };
}
