/**
 * The chat client of `svc llm chat`: finds a running OpenAI-compatible server by probing
 * `/models`, and streams chat completions from it (SSE).
 *
 * @module
 */

import {
  AuthenticationError,
  ServiceError,
  ServiceUnavailableError,
  ValidationError,
} from "../core/errors.ts";
import { readSseData } from "../protocol/sse.ts";
import { joinUrl } from "../core/fetch_with_timeout.ts";
import { fetchOrThrow, readJson } from "./_http.ts";
import { sleep } from "../core/sleep.ts";

/** A model as `/models` lists it (with Svc's extensions when the server is Svc). */
export interface ServedModel {
  id: string;
  /** Svc extension: `chat` or `embedding`. */
  kind?: string;
  /** Svc extension: the model has random weights (a demo model). */
  random_weights?: boolean;
}

/** A server that answered. */
export interface ChatServer {
  /** Base URL ending in `/v1` (as it answered). */
  baseUrl: string;
  models: ServedModel[];
}

/** Options of {@link findChatServer}. */
export interface FindServerOptions {
  /** Bearer key (SVC_CHAT_API_KEY). */
  apiKey?: string;
  /** Per-probe timeout; default 800 ms. */
  timeoutMs?: number;
}

/**
 * Probes `GET <base>/models` at each candidate in order and returns the first server that
 * answers with a model list. A server that rejects the key ends the search with that error (it
 * is there, the key is wrong); one that cannot be reached or is no OpenAI server is skipped.
 * When none answers: a ServiceError naming every URL tried and how to start a server.
 */
export async function findChatServer(
  candidates: string[],
  options: FindServerOptions = {},
): Promise<ChatServer> {
  const tried: string[] = [];
  for (const candidate of candidates) {
    const baseUrl = candidate.replace(/\/+$/, "");
    tried.push(baseUrl);
    let response: Response;
    try {
      response = await fetchOrThrow(joinUrl(baseUrl, "models"), {
        headers: authHeaders(options.apiKey),
      }, {
        what: "the chat server",
        keyVariable: "SVC_CHAT_API_KEY",
        timeoutMs: options.timeoutMs ?? 800,
      });
    } catch (err) {
      // A wrong key means the server is there: say so rather than look elsewhere.
      if (err instanceof AuthenticationError || !(err instanceof Error)) throw err;
      if (err instanceof Deno.errors.NotCapable) throw err;
      continue;
    }
    const body = await readJson<{ data?: unknown }>(response, `the server at ${baseUrl}`).catch(
      () => null,
    );
    if (body === null || !Array.isArray(body.data)) continue;
    const models = body.data.filter((m): m is ServedModel =>
      typeof (m as ServedModel)?.id === "string"
    );
    return { baseUrl, models };
  }
  throw new ServiceError(
    `no OpenAI-compatible server answered at ${tried.join(", ")}: start one with ` +
      "'svc llm serve' (or 'svc llm run --model demo/chat'), or pass --base-url / set " +
      "SVC_CHAT_BASE_URL",
    { code: "no_server" },
  );
}

/**
 * The model to chat with: the first listed model that is not an embedding model or a reranker
 * (servers other than Svc list no kinds). A ValidationError when there is none.
 */
export function pickChatModel(server: ChatServer): ServedModel {
  const model = server.models.find((m) => m.kind !== "embedding" && m.kind !== "rerank");
  if (!model) {
    throw new ValidationError(
      `the server at ${server.baseUrl} lists no chat model` +
        (server.models.length ? ` (only ${server.models.map((m) => m.id).join(", ")})` : "") +
        ": pass --model <id> or set SVC_CHAT_MODEL",
      { param: "model" },
    );
  }
  return model;
}

/** One message of the conversation `svc llm chat` sends, as the OpenAI chat API takes it. */
export interface ChatTurn {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Options of {@link streamChat}. */
export interface StreamChatOptions {
  model: string;
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
  /** Aborts the reply (Ctrl-C). */
  signal?: AbortSignal;
  /** Receives each piece of text as it arrives. */
  onDelta: (text: string) => void;
  /** While the server answers 503 (a model loading), retry for this long; default 60000 ms. */
  loadWaitMs?: number;
  /** Called once when the server says it is still loading. */
  onWaiting?: () => void;
}

/** How a streamed reply ended. */
export interface ChatReply {
  content: string;
  finishReason: string | null;
}

/**
 * Sends `messages` with `stream: true` and passes each content delta to `onDelta`. An error the
 * server sends inside the stream becomes a ServiceError; 503 answers are retried while the
 * model loads (honouring Retry-After).
 */
export async function streamChat(
  baseUrl: string,
  messages: ChatTurn[],
  options: StreamChatOptions,
): Promise<ChatReply> {
  const body: Record<string, unknown> = { model: options.model, messages, stream: true };
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  const url = joinUrl(baseUrl, "chat/completions");
  const deadline = Date.now() + (options.loadWaitMs ?? 60_000);
  let waited = false;
  let response: Response;
  while (true) {
    try {
      response = await fetchOrThrow(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...authHeaders(options.apiKey) },
        body: JSON.stringify(body),
      }, {
        what: "the chat server",
        keyVariable: "SVC_CHAT_API_KEY",
        signal: options.signal,
        timeoutMs: 120_000,
      });
      break;
    } catch (err) {
      if (!(err instanceof ServiceUnavailableError) || Date.now() >= deadline) throw err;
      if (!waited) options.onWaiting?.();
      waited = true;
      await sleep(Math.min(err.retryAfterSeconds * 1000, 5000), options.signal);
    }
  }
  let content = "";
  let finishReason: string | null = null;
  for await (const data of readSseData(response.body!)) {
    if (data === "[DONE]") break;
    let chunk: {
      error?: { message?: string };
      choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
    };
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new ServiceError(
        `the chat server sent an event that is not JSON: ${data.slice(0, 200)}`,
      );
    }
    if (chunk.error) {
      throw new ServiceError(`the chat server failed mid-reply: ${chunk.error.message ?? data}`);
    }
    const choice = chunk.choices?.[0];
    const text = choice?.delta?.content;
    if (typeof text === "string" && text !== "") {
      content += text;
      options.onDelta(text);
    }
    if (choice?.finish_reason) finishReason = choice.finish_reason;
  }
  return { content, finishReason };
}

function authHeaders(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}
