/**
 * Where and in what shape a request reaches a backend. The OpenAI-shaped endpoints are the same
 * everywhere (under `/v1`); the tokenizer endpoints are not part of OpenAI's API: Svc and vLLM
 * serve `/tokenize` and `/detokenize` at the server root with `prompt`/`tokens` and answer
 * `{count, max_model_len, tokens}` and `{prompt}`, while llama.cpp's server reads `content` and
 * answers `{tokens}` and `{content}`. The gateway speaks the vLLM shape to clients and maps it.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";
import type { Backend } from "./backend.ts";

/** The URL and JSON body of a request for `path` (like `/chat/completions`) on `backend`. */
export function upstreamRequest(
  backend: Backend,
  path: string,
  body: Record<string, unknown>,
): { url: string; body: unknown } {
  // Cohere's v2 rerank path sits next to /v1, as vLLM and Svc engines serve it.
  if (path.startsWith("/v2/")) return { url: backend.rootUrl(path), body };
  if (path !== "/tokenize" && path !== "/detokenize") return { url: backend.url(path), body };
  const url = backend.rootUrl(path);
  if (backend.config.server !== "llama.cpp") return { url, body };
  if (path === "/detokenize") return { url, body: { tokens: body.tokens } };
  if (body.prompt === undefined) {
    throw new ValidationError(
      `the backend '${backend.id}' (llama.cpp) tokenizes text only: send 'prompt', not 'messages'`,
      { param: "messages" },
    );
  }
  return {
    url,
    body: {
      content: body.prompt,
      add_special: body.add_special_tokens ?? true,
      parse_special: true,
    },
  };
}

/** A successful JSON answer for `path` from `backend`, in the shape the gateway's clients get. */
export function clientAnswer(backend: Backend, path: string, bytes: ArrayBuffer): ArrayBuffer {
  if (backend.config.server !== "llama.cpp") return bytes;
  if (path !== "/tokenize" && path !== "/detokenize") return bytes;
  const answer = JSON.parse(new TextDecoder().decode(bytes));
  const mapped = path === "/tokenize"
    ? { count: answer.tokens.length, tokens: answer.tokens }
    : { prompt: answer.content };
  return new TextEncoder().encode(JSON.stringify(mapped)).buffer as ArrayBuffer;
}
