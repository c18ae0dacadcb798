/**
 * Reads a JSON request body under a size limit, enforced while the body streams in (and early,
 * from `Content-Length`), so a huge body is refused without being buffered.
 *
 * @module
 */
import {
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from "../core/errors.ts";

/** Default body limit: 8 MiB (a full 2048-input embeddings request fits). */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

// Without `stream`, decode() keeps no state between calls, so one decoder serves every request.
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads the body bytes; throws {@link PayloadTooLargeError} as soon as more than `maxBytes` arrive.
 *
 * @example
 * ```ts
 * import { readBodyBytes } from "./body.ts";
 * const bytes = await readBodyBytes(new Request("http://x", { method: "POST", body: "{}" }), {
 *   maxBytes: 1024,
 * });
 * ```
 */
export async function readBodyBytes(
  req: Request,
  options: { maxBytes: number },
): Promise<Uint8Array> {
  const { maxBytes } = options;
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  // The HTTP server stops a body at its declared length, so such a body fits: read it whole,
  // several times cheaper than the chunk loop (and before `req.body`, which makes a stream).
  if (declared !== null && /^\d+$/.test(declared)) return await req.bytes();
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/**
 * Reads and parses a JSON body: 413 when too large, 400 when empty, not UTF-8 or not JSON.
 *
 * @example
 * ```ts
 * import { readJsonBody } from "./body.ts";
 * const req = new Request("http://x", { method: "POST", body: '{"a":1}' });
 * await readJsonBody(req, { maxBytes: 1024 }); // { a: 1 }
 * ```
 */
export async function readJsonBody(req: Request, options: { maxBytes: number }): Promise<unknown> {
  const coding = req.headers.get("content-encoding")?.trim().toLowerCase();
  if (coding !== undefined && coding !== "" && coding !== "identity") {
    await req.body?.cancel().catch(() => {});
    throw new UnsupportedMediaTypeError(
      `The request body is encoded as '${coding.slice(0, 40)}', which this server does not ` +
        "decode: send it without Content-Encoding.",
      { code: "unsupported_content_encoding" },
    );
  }
  const bytes = await readBodyBytes(req, options);
  if (bytes.byteLength === 0) {
    throw new ValidationError("The request body is empty: send a JSON object.", {
      code: "invalid_json",
    });
  }
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw new ValidationError("The request body is not valid UTF-8: send JSON encoded as UTF-8.", {
      code: "invalid_encoding",
    });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? `: ${err.message.slice(0, 200)}` : "";
    throw new ValidationError(
      `We could not parse the JSON body of your request${detail}. Send a valid JSON object.`,
      { code: "invalid_json" },
    );
  }
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    `The request body is larger than this server accepts (${maxBytes} bytes); send less ` +
      "(split the inputs over several requests) or raise the server's limit (--max-body-bytes).",
  );
}
