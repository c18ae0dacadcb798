/**
 * Responses whose body bytes are already in memory, remembered beside the `Response`: the
 * HTTP/1.1 writer sends those bytes at once and an answer tap parses them, with no body stream
 * made or read (a stream read costs more than the rest of a small answer's trip). The `Response`
 * stays an ordinary one: anything else may read its body as usual.
 *
 * @module
 */

const KNOWN = new WeakMap<Response, Uint8Array>();

/**
 * A `Response` of `bytes`, with the bytes remembered for {@link knownBody}. The caller must not
 * change `bytes` afterwards.
 *
 * @example
 * ```ts
 * import { bytesResponse, knownBody } from "./known_body.ts";
 * const res = bytesResponse(new TextEncoder().encode("{}"), {
 *   headers: { "content-type": "application/json" },
 * });
 * knownBody(res)?.byteLength; // 2
 * ```
 */
export function bytesResponse(bytes: Uint8Array, init?: ResponseInit): Response {
  const res = new Response(bytes as Uint8Array<ArrayBuffer>, init);
  KNOWN.set(res, bytes);
  return res;
}

/**
 * The body of `res` when it was made by {@link bytesResponse} and its body stream was not read
 * yet; undefined otherwise (read the body as usual then).
 *
 * @example
 * ```ts
 * import { knownBody } from "./known_body.ts";
 * knownBody(new Response("hi")); // undefined: not made by bytesResponse
 * ```
 */
export function knownBody(res: Response): Uint8Array | undefined {
  const bytes = KNOWN.get(res);
  return bytes === undefined || res.bodyUsed ? undefined : bytes;
}
