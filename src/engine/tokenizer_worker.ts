/**
 * Worker side of {@link TokenizerThread}: a copy of a model's tokenizer that renders and encodes
 * large prompts, and decodes long id lists, so that work never stalls the server's thread.
 *
 * @module
 */

import { loadTokenizer, type Tokenizer } from "./load_model.ts";
import { renderPrompt } from "./chat/prompt.ts";
import { detokenizeWith, encodePairs, encodeTexts, tokenizeWith } from "./tokenization.ts";
import type { TokenizerReply, TokenizerRequest } from "./tokenizer_thread.ts";

const scope = self as unknown as {
  postMessage(message: TokenizerReply): void;
  onmessage: ((event: MessageEvent<TokenizerRequest>) => void) | null;
};
// onnxruntime-web resolves files against `location` when there is one (see session_worker.ts).
Object.defineProperty(globalThis, "location", { value: undefined, configurable: true });

let tokenizer: Promise<Tokenizer> | undefined;

scope.onmessage = async ({ data }) => {
  try {
    tokenizer ??= loadTokenizer(data.folder, data.device);
    const t = await tokenizer;
    const result = data.task.type === "render"
      ? renderPrompt(t, data.task.input, data.task.modelId)
      : data.task.type === "tokenize"
      ? tokenizeWith(t, data.task.input, data.task.modelId, data.task.options)
      : data.task.type === "pairs"
      ? encodePairs(t, data.task.query, data.task.documents, data.task.options)
      : data.task.type === "encode"
      ? encodeTexts(t, data.task.texts, data.task.options)
      : detokenizeWith(t, data.task.ids);
    scope.postMessage({ id: data.id, result });
  } catch (err) {
    const e = err as { name?: string; message?: string; param?: string; code?: string };
    const error = { name: e.name ?? "Error", message: e.message ?? String(err) };
    scope.postMessage({ id: data.id, error: { ...error, param: e.param, code: e.code } });
  }
};
