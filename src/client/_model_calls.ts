// The requests behind UnifiedInferenceClient's model calls: each builds its body from the
// camelCase options, sends it to the endpoint and model the client chose, and checks and reads
// the answer (one that lacks what the call returns is a ServiceError, code `bad_response`).
import { ServiceError } from "../core/errors.ts";
import type { ChatCompletion } from "../protocol/chat_response.ts";
import { decodeFloat32Base64 } from "../protocol/embedding_response.ts";
import { rankedResultsOf } from "../protocol/rerank_results.ts";
import type { ResponseObject } from "../protocol/responses_object.ts";
import { readChatDeltas } from "./_chat_stream.ts";
import type { ClientHttp, HttpTarget } from "./_http.ts";
import { chatBody, toolCallsOf } from "./_wire.ts";
import type {
  ChatInputMessage,
  ChatOptions,
  ChatResponse,
  ChatStreamDelta,
  EmbedOptions,
  RerankedDocument,
  RerankOptions,
  ResponsesOptions,
  ResponsesResult,
  SamplingOptions,
  TokenizeOptions,
  TokenizeResult,
} from "./types.ts";

/** Where a call goes: the client's HTTP, the endpoint, and the model to name. */
export interface CallRoute {
  http: ClientHttp;
  target: HttpTarget;
  model: string;
}

/** `POST /chat/completions`, not streamed. */
export async function sendChat(
  { http, target, model }: CallRoute,
  messages: readonly ChatInputMessage[] | string,
  options: ChatOptions,
  defaults: SamplingOptions | undefined,
): Promise<ChatResponse> {
  const body = chatBody(model, messages, options, defaults, false);
  const answer = await http.json<ChatCompletion>(target, "/chat/completions", {
    method: "POST",
    body,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
  if (!Array.isArray(answer?.choices)) {
    throw new ServiceError(`${target.baseUrl}/chat/completions answered without choices`, {
      code: "bad_response",
    });
  }
  const message = answer.choices[0]?.message;
  return { ...answer, text: message?.content ?? "", toolCalls: toolCallsOf(message) };
}

/** `POST /chat/completions` with `stream`: the deltas as they come. */
export async function* streamChat(
  { http, target, model }: CallRoute,
  messages: readonly ChatInputMessage[] | string,
  options: ChatOptions,
  defaults: SamplingOptions | undefined,
): AsyncGenerator<ChatStreamDelta, void, undefined> {
  const body = chatBody(model, messages, options, defaults, true);
  const open = await http.stream(target, "/chat/completions", {
    method: "POST",
    body,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
  yield* readChatDeltas(open);
}

/** `POST /responses`; the answer gains `outputText` (its messages' text, joined). */
export async function sendResponses(
  { http, target, model }: CallRoute,
  input: string | readonly Record<string, unknown>[],
  options: ResponsesOptions,
): Promise<ResponsesResult> {
  const body: Record<string, unknown> = { model, input };
  const fields: [string, unknown][] = [
    ["instructions", options.instructions],
    ["previous_response_id", options.previousResponseId],
    ["store", options.store],
    ["max_output_tokens", options.maxOutputTokens],
    ["temperature", options.temperature],
    ["top_p", options.topP],
  ];
  for (const [name, value] of fields) if (value !== undefined) body[name] = value;
  Object.assign(body, options.extraBody);
  const answer = await http.json<ResponseObject>(target, "/responses", {
    method: "POST",
    body,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
  if (!Array.isArray(answer?.output)) {
    throw new ServiceError(`${target.baseUrl}/responses answered without output`, {
      code: "bad_response",
    });
  }
  const outputText = answer.output.flatMap((item) =>
    item.type === "message" ? item.content.map((part) => part.text) : []
  ).join("");
  return { ...answer, outputText };
}

/** `POST /embeddings` in batches of `batchSize` (default 256): one vector per text, in order. */
export async function sendEmbeddings(
  { http, target, model }: CallRoute,
  list: readonly string[],
  batchSize: number | undefined,
  options: EmbedOptions,
): Promise<number[][]> {
  const size = Math.max(1, batchSize ?? 256);
  const out: number[][] = [];
  for (let start = 0; start < list.length; start += size) {
    const input = list.slice(start, start + size);
    const body: Record<string, unknown> = { model, input, encoding_format: "float" };
    if (options.dimensions !== undefined) body.dimensions = options.dimensions;
    const answer = await http.json<{ data?: { index?: number; embedding?: unknown }[] }>(
      target,
      "/embeddings",
      { method: "POST", body, signal: options.signal, timeoutMs: options.timeoutMs },
    );
    const data = Array.isArray(answer?.data) ? [...answer.data] : [];
    if (data.length !== input.length) {
      throw new ServiceError(
        `${target.baseUrl}/embeddings answered ${data.length} vectors for ${input.length} inputs`,
        { code: "bad_response" },
      );
    }
    data.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    for (const d of data) {
      const v = d.embedding;
      out.push(typeof v === "string" ? Array.from(decodeFloat32Base64(v)) : v as number[]);
    }
  }
  return out;
}

/** `POST /rerank`: the documents with their scores, best first. */
export async function sendRerank(
  { http, target, model }: CallRoute,
  query: string,
  documents: readonly string[],
  options: RerankOptions,
): Promise<RerankedDocument[]> {
  const body: Record<string, unknown> = { model, query, documents, return_documents: false };
  if (options.topN !== undefined) body.top_n = options.topN;
  if (options.rawScores !== undefined) body.raw_scores = options.rawScores;
  if (options.truncate !== undefined) body.truncate = options.truncate;
  const answer = await http.json<unknown>(
    target,
    "/rerank",
    { method: "POST", body, signal: options.signal, timeoutMs: options.timeoutMs },
  );
  const ranked = rankedResultsOf(answer, documents);
  if (!ranked) {
    throw new ServiceError(`${target.baseUrl}/rerank answered without valid results`, {
      code: "bad_response",
    });
  }
  return ranked;
}

/** `POST /tokenize` of a text (`prompt`) or of chat messages (`messages`). */
export async function sendTokenize(
  { http, target, model }: CallRoute,
  input: string | readonly ChatInputMessage[],
  options: TokenizeOptions,
): Promise<TokenizeResult> {
  let body: Record<string, unknown>;
  if (typeof input === "string") {
    body = { model, prompt: input };
    if (options.addSpecialTokens !== undefined) {
      body.add_special_tokens = options.addSpecialTokens;
    }
  } else {
    body = { model, messages: chatBody(model, input, {}, undefined, false).messages };
    if (options.addGenerationPrompt !== undefined) {
      body.add_generation_prompt = options.addGenerationPrompt;
    }
  }
  if (options.returnTokenStrs) body.return_token_strs = true;
  const answer = await http.json<
    { count?: unknown; max_model_len?: unknown; tokens?: unknown; token_strs?: unknown }
  >(target, "/tokenize", {
    method: "POST",
    body,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
  if (!Array.isArray(answer?.tokens) || typeof answer.max_model_len !== "number") {
    throw new ServiceError(`${target.baseUrl}/tokenize answered without tokens`, {
      code: "bad_response",
    });
  }
  return {
    count: answer.tokens.length,
    maxModelLen: answer.max_model_len,
    tokens: answer.tokens as number[],
    ...(Array.isArray(answer.token_strs) ? { tokenStrs: answer.token_strs as string[] } : {}),
  };
}

/** `POST /detokenize`: the text of token ids. */
export async function sendDetokenize(
  { http, target, model }: CallRoute,
  tokens: readonly number[],
  options: Pick<TokenizeOptions, "signal" | "timeoutMs">,
): Promise<string> {
  const answer = await http.json<{ prompt?: unknown }>(target, "/detokenize", {
    method: "POST",
    body: { model, tokens },
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
  if (typeof answer?.prompt !== "string") {
    throw new ServiceError(`${target.baseUrl}/detokenize answered without a prompt`, {
      code: "bad_response",
    });
  }
  return answer.prompt;
}
