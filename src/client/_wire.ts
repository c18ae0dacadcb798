// The client's side of the OpenAI wire format: request bodies from camelCase options, and the
// reading of `/v1/models` lists (which model is chat, which is embedding).
import { ValidationError } from "../core/errors.ts";
import { toToolCalls, toWireToolCalls, type WireToolCall } from "../protocol/tools.ts";
import type { ToolCall } from "../core/inference_types.ts";
import type { ChatInputMessage, ChatOptions, ListedModel, SamplingOptions } from "./types.ts";
import { type EngineKind, parseModelKind } from "../core/model_kind.ts";
import { checkSampling } from "./_client_setup.ts";

export type { ListedModel };

// Same words the engine and gateway use to guess a reranker or an embedding model from its name.
const RERANK_NAME = /rerank|cross-encoder|ms-marco/i;
const EMBEDDING_NAME = /embed|minilm|mpnet|bge|e5-|gte|sentence|nomic|jina/i;

const SAMPLING_FIELDS: Record<keyof SamplingOptions, string> = {
  temperature: "temperature",
  topP: "top_p",
  topK: "top_k",
  maxTokens: "max_tokens",
  stop: "stop",
  seed: "seed",
  presencePenalty: "presence_penalty",
  frequencyPenalty: "frequency_penalty",
  repetitionPenalty: "repetition_penalty",
  n: "n",
};

/** The `/v1/chat/completions` body. */
export function chatBody(
  model: string,
  messages: readonly ChatInputMessage[] | string,
  options: ChatOptions,
  defaults: SamplingOptions | undefined,
  stream: boolean,
): Record<string, unknown> {
  const list: readonly ChatInputMessage[] = typeof messages === "string"
    ? [{ role: "user", content: messages }]
    : messages;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ValidationError("messages must be a non-empty list of {role, content}", {
      param: "messages",
    });
  }
  const body: Record<string, unknown> = {
    model,
    messages: list.map((m, i) => {
      if (typeof m !== "object" || m === null || typeof m.role !== "string") {
        throw new ValidationError(`messages[${i}] must be an object with a role and content`, {
          param: `messages[${i}]`,
        });
      }
      return {
        role: m.role,
        content: m.content,
        ...(m.name === undefined ? {} : { name: m.name }),
        ...(m.toolCallId === undefined ? {} : { tool_call_id: m.toolCallId }),
        ...(m.toolCalls?.length ? { tool_calls: toWireToolCalls(m.toolCalls) } : {}),
      };
    }),
  };
  if (options.tools !== undefined) {
    body.tools = options.tools.map((f) => ({ type: "function", function: f }));
  }
  const choice = options.toolChoice;
  if (choice !== undefined) {
    body.tool_choice = typeof choice === "string"
      ? choice
      : { type: "function", function: { name: choice.name } };
  }
  if (options.parallelToolCalls !== undefined) body.parallel_tool_calls = options.parallelToolCalls;
  const format = options.responseFormat;
  if (format?.type === "json_object") body.response_format = { type: "json_object" };
  if (format?.type === "json_schema") {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: format.name ?? "response", schema: format.schema, strict: true },
    };
  }
  checkSampling(options as Record<string, unknown>, "", "call");
  for (const source of [defaults ?? {}, options]) {
    for (const [key, wire] of Object.entries(SAMPLING_FIELDS)) {
      const value = (source as Record<string, unknown>)[key];
      if (value !== undefined) body[wire] = value;
    }
  }
  if (stream) body.stream = true;
  return { ...body, ...options.extraBody };
}

/** Models of a `/v1/models` answer; an answer that is not a list gives none. */
export function listedModels(answer: unknown, defaultKind?: EngineKind): ListedModel[] {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return [];
  const out: ListedModel[] = [];
  for (const entry of data) {
    const id = (entry as { id?: unknown })?.id;
    if (typeof id !== "string" || id === "") continue;
    const kind = (entry as { kind?: unknown }).kind;
    out.push({
      id,
      ...((entry as { random_weights?: unknown }).random_weights === true
        ? { randomWeights: true }
        : {}),
      kind: parseModelKind(kind) ?? defaultKind ??
        (EMBEDDING_NAME.test(id) ? "embedding" : "chat"),
    });
  }
  return out;
}

/**
 * The first reranker of a list: one listed as `rerank`, else (other servers, and engines
 * registered with a gateway, list rerankers as embedding models) one whose name says so.
 */
export function firstReranker(models: readonly ListedModel[]): string | null {
  return models.find((m) => m.kind === "rerank")?.id ??
    models.find((m) => RERANK_NAME.test(m.id))?.id ?? null;
}

/** The first model of a kind in a list, or null. */
export function firstOfKind(models: readonly ListedModel[], kind: EngineKind): string | null {
  return models.find((m) => m.kind === kind)?.id ?? null;
}

/** The typed tool calls of an answer's message (none when it has none). */
export function toolCallsOf(message: { tool_calls?: WireToolCall[] } | undefined): ToolCall[] {
  return message?.tool_calls ? toToolCalls(message.tool_calls) : [];
}
