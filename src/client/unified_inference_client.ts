/**
 * `UnifiedInferenceClient`: one client for chat, text generation and embeddings, whether the
 * models sit behind local engines, a gateway, the gateway code inside this process, or an
 * OpenAI-compatible cloud API. How `create()` finds them is documented in
 * `detect_endpoints.ts` (the detection rule).
 *
 * @module
 */
import { ConfigurationError, ValidationError } from "../core/errors.ts";
import type { EngineKind } from "../core/model_kind.ts";
import type { EmbeddedControlPlane } from "../gateway/embedded_types.ts";
import {
  type ClientInit,
  initForModel,
  initFromOptions,
  initWithControlPlane,
} from "./_client_init.ts";
import { checkSampling, type Endpoint, httpPolicy, info, NO_ENDPOINT } from "./_client_setup.ts";
import { endpointStatus, listedModelOf, listedRerankerOf } from "./_endpoint_models.ts";
import { ClientHttp, type FetchLike, type HttpTarget } from "./_http.ts";
import {
  type CallRoute,
  sendChat,
  sendDetokenize,
  sendEmbeddings,
  sendRerank,
  sendResponses,
  sendTokenize,
  streamChat,
} from "./_model_calls.ts";
import type { DetectionOptions } from "./detect_endpoints.ts";
import type {
  ChatInputMessage,
  ChatOptions,
  ChatResponse,
  ChatStreamDelta,
  ClientStatus,
  CreateForModelOptions,
  EmbedOptions,
  EndpointInfo,
  GenerateOptions,
  RerankedDocument,
  RerankOptions,
  ResponsesOptions,
  ResponsesResult,
  TokenizeOptions,
  TokenizeResult,
  UnifiedClientConfig,
  UnifiedClientMode,
  UnifiedClientOptions,
} from "./types.ts";

/**
 * The unified client. Build it with a static factory; `close()` it when done (it matters in
 * embedded mode, where it owns the engines).
 *
 * @example
 * ```ts
 * import { UnifiedInferenceClient } from "@svc/cli/client";
 * const client = await UnifiedInferenceClient.createAuto();
 * console.log(await client.generate("Say hello", { maxTokens: 16 }));
 * console.log((await client.embed(["a", "b"])).length); // 2
 * await client.close();
 * ```
 */
export class UnifiedInferenceClient {
  #mode: UnifiedClientMode;
  #chat: Endpoint;
  #embedding: Endpoint;
  #config: UnifiedClientConfig;
  #http: ClientHttp;
  #fetch?: FetchLike;
  #controlPlaneUrl: string | null;
  #embedded?: EmbeddedControlPlane;
  #probeTimeoutMs: number;
  /** The reranker found at the embedding endpoint, once looked up. */
  #rerank: string | undefined;
  /** Set by close(): every call fails from then on. */
  #closed = false;

  private constructor(init: ClientInit) {
    this.#mode = init.mode;
    this.#chat = init.chat;
    this.#embedding = init.embedding;
    this.#config = init.config;
    this.#fetch = init.fetch;
    this.#http = new ClientHttp(httpPolicy(init.config), init.fetch);
    this.#controlPlaneUrl = init.controlPlaneUrl ?? null;
    this.#embedded = init.embedded;
    this.#probeTimeoutMs = init.probeTimeoutMs ?? 500;
  }

  /**
   * Detects the available services (the rule of `detect_endpoints.ts`); simple mode.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createAuto();
   * console.log((await client.status()).chat); // where chat goes, and whether it answers
   * ```
   */
  static createAuto(
    options: UnifiedClientConfig & DetectionOptions = {},
  ): Promise<UnifiedInferenceClient> {
    return UnifiedInferenceClient.create(options);
  }

  /**
   * Builds a client: with `controlPlaneUrl` through that gateway (control-plane mode), with
   * `embedded` through the gateway code in this process, else by detection (simple mode).
   * Both `controlPlaneUrl` and `embedded` is a ConfigurationError.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const viaGateway = await UnifiedInferenceClient.create({
   *   controlPlaneUrl: "http://127.0.0.1:8000/v1",
   * });
   * const inProcess = await UnifiedInferenceClient.create({
   *   embedded: { chatModel: "demo/chat", embeddingModel: "demo/embed" },
   * });
   * await inProcess.close();
   * ```
   */
  static async create(options: UnifiedClientOptions = {}): Promise<UnifiedInferenceClient> {
    // Embedded mode loads the engine runtime lazily, there and only there (_client_init.ts).
    return new UnifiedInferenceClient(await initFromOptions(options));
  }

  /**
   * A client in control-plane mode on explicit gateway endpoints (the four strings of the
   * spec; base URLs end in /v1). No I/O happens here. The key is `apiKey`, else SVC_CHAT_API_KEY.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = UnifiedInferenceClient.createWithControlPlane(
   *   "http://127.0.0.1:8000/v1", "demo/chat", "http://127.0.0.1:8000/v1", "demo/embed",
   * );
   * ```
   */
  static createWithControlPlane(
    llmBaseUrl: string,
    llmModel: string,
    embeddingBaseUrl: string,
    embeddingModel: string,
    config: UnifiedClientConfig & Pick<DetectionOptions, "fetch" | "env" | "envFile"> = {},
  ): UnifiedInferenceClient {
    return new UnifiedInferenceClient(
      initWithControlPlane(llmBaseUrl, llmModel, embeddingBaseUrl, embeddingModel, config),
    );
  }

  /**
   * Asks the gateway's management API to start an engine for `model` (or reuse one serving it),
   * waits until it is ready (`readyTimeoutMs`, default 10 minutes; `onProgress` hears each state),
   * and returns a client in control-plane mode bound to it. The gateway is `controlPlaneUrl`, else
   * the first that answers of: the gateway a running `svc llm serve` recorded in its state file
   * (as detection reads it), the detection hosts at the gateway port (default 8000). The
   * management calls carry `adminApiKey`, else SVC_ADMIN_API_KEY, else the chat key.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createForModel("Xenova/all-MiniLM-L6-v2", {
   *   readyTimeoutMs: 120_000,
   *   onProgress: (p) => console.log(p.state, p.message ?? ""),
   * });
   * console.log((await client.embed("hello"))[0].length);
   * ```
   */
  static async createForModel(
    model: string,
    options: CreateForModelOptions = {},
  ): Promise<UnifiedInferenceClient> {
    return new UnifiedInferenceClient(await initForModel(model, options));
  }

  /** How this client reaches its models. */
  get mode(): UnifiedClientMode {
    return this.#mode;
  }

  /** The chat and embedding endpoints (no keys). */
  get endpoints(): { chat: EndpointInfo; embedding: EndpointInfo } {
    return { chat: info(this.#chat), embedding: info(this.#embedding) };
  }

  /**
   * Probes both endpoints now and reports the mode, the endpoints and what is available (nothing,
   * once the client is closed).
   */
  async status(): Promise<ClientStatus> {
    const probe = { probeTimeoutMs: this.#probeTimeoutMs, fetch: this.#fetch };
    const [chat, embedding] = await Promise.all([
      endpointStatus(this.#chat, "chat", this.#closed, probe),
      endpointStatus(this.#embedding, "embedding", this.#closed, probe),
    ]);
    return { mode: this.#mode, chat, embedding, controlPlaneUrl: this.#controlPlaneUrl };
  }

  /**
   * Sends a chat completion; the answer is OpenAI's `chat.completion` plus `text` (the first
   * choice's content). A string stands for one user message.
   */
  async chat(
    messages: readonly ChatInputMessage[] | string,
    options: ChatOptions = {},
  ): Promise<ChatResponse> {
    return await sendChat(
      await this.#route("chat", options),
      messages,
      options,
      this.#config.defaultSampling,
    );
  }

  /**
   * Streams a chat completion as deltas. Abort with `options.signal` (the iteration then throws
   * a CancelledError) or stop iterating; either way the server is told at once.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createAuto();
   * const stop = new AbortController();
   * setTimeout(() => stop.abort(), 5000);
   * for await (const delta of client.chatStream("Tell a story", { signal: stop.signal })) {
   *   console.log(delta.content);
   * }
   * ```
   */
  async *chatStream(
    messages: readonly ChatInputMessage[] | string,
    options: ChatOptions = {},
  ): AsyncGenerator<ChatStreamDelta, void, undefined> {
    const route = await this.#route("chat", options);
    yield* streamChat(route, messages, options, this.#config.defaultSampling);
  }

  /**
   * Sends a request to the Responses API (`POST /responses`): `input` is a string or a list of
   * input items (messages, `function_call`, `function_call_output`). Pass the answer's `id` as
   * `previousResponseId` to continue the conversation without sending it again.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createAuto();
   * const first = await client.responses("My name is Ada.");
   * const second = await client.responses("What is my name?", { previousResponseId: first.id });
   * console.log(second.outputText);
   * ```
   */
  async responses(
    input: string | readonly Record<string, unknown>[],
    options: ResponsesOptions = {},
  ): Promise<ResponsesResult> {
    checkSampling(options as Record<string, unknown>, "", "call");
    return await sendResponses(await this.#route("chat", options), input, options);
  }

  /** Generates text for a prompt (a chat call with the prompt as the user message). */
  async generate(prompt: string, options: GenerateOptions = {}): Promise<string> {
    if (typeof prompt !== "string") {
      throw new ValidationError("prompt must be a string", { param: "prompt" });
    }
    const { system, ...rest } = options;
    const messages: ChatInputMessage[] = system === undefined
      ? [{ role: "user", content: prompt }]
      : [{ role: "system", content: system }, { role: "user", content: prompt }];
    return (await this.chat(messages, rest)).text;
  }

  /** Embeds texts (one string is accepted too); returns one vector per text, in order. */
  async embed(texts: readonly string[] | string, options: EmbedOptions = {}): Promise<number[][]> {
    const list = typeof texts === "string" ? [texts] : texts;
    if (!Array.isArray(list) || list.some((t) => typeof t !== "string")) {
      throw new ValidationError("texts must be a string or a list of strings", { param: "input" });
    }
    if (list.length === 0) return [];
    const route = await this.#route("embedding", options);
    return await sendEmbeddings(route, list, this.#config.embedBatchSize, options);
  }

  /**
   * Ranks `documents` by relevance to `query` with a reranker (a cross-encoder served beside the
   * embedding model: `svc llm serve --with-embedding`, or in embedded mode the one named by
   * `embedded: { rerankModel }`), best first.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createAuto();
   * const [best] = await client.rerank("capital of France", ["Berlin is…", "Paris is…"]);
   * console.log(best.index, best.score);
   * ```
   */
  async rerank(
    query: string,
    documents: readonly string[],
    options: RerankOptions = {},
  ): Promise<RerankedDocument[]> {
    if (typeof query !== "string") {
      throw new ValidationError("query must be a string", { param: "query" });
    }
    if (!Array.isArray(documents) || documents.some((d) => typeof d !== "string")) {
      throw new ValidationError("documents must be a list of strings", { param: "documents" });
    }
    if (documents.length === 0) return [];
    const target = this.#target("embedding");
    const model = options.model ?? this.#config.rerankModel ?? await this.#rerankModel(options);
    return await sendRerank({ http: this.#http, target, model }, query, documents, options);
  }

  /**
   * Token ids of a text or of chat messages (rendered with the model's chat template), as the
   * model counts them: compare `count` with `maxModelLen` before sending a long prompt.
   *
   * @example
   * ```ts
   * import { UnifiedInferenceClient } from "@svc/cli/client";
   * const client = await UnifiedInferenceClient.createAuto();
   * const { count, maxModelLen } = await client.tokenize([{ role: "user", content: "hi" }]);
   * ```
   */
  async tokenize(
    input: string | readonly ChatInputMessage[],
    options: TokenizeOptions = {},
  ): Promise<TokenizeResult> {
    return await sendTokenize(await this.#route(options.kind ?? "chat", options), input, options);
  }

  /** The text of token ids, by the model's tokenizer (`tokenize`'s inverse). */
  async detokenize(
    tokens: readonly number[],
    options: Pick<TokenizeOptions, "model" | "kind" | "signal" | "timeoutMs"> = {},
  ): Promise<string> {
    return await sendDetokenize(
      await this.#route(options.kind ?? "chat", options),
      tokens,
      options,
    );
  }

  /**
   * Stops what this client owns (the embedded control plane and its engines). In every mode the
   * client is then closed: each call fails at once with a ConfigurationError (code
   * `client_closed`) and `status()` reports nothing available. Closing again does nothing.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#embedded?.close();
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #target(kind: EngineKind): HttpTarget {
    if (this.#closed) {
      throw new ConfigurationError(
        "the client is closed (close() was called): create a new one to go on",
        { code: "client_closed" },
      );
    }
    const e = kind === "chat" ? this.#chat : this.#embedding;
    if (e.baseUrl === null) {
      throw new ConfigurationError(NO_ENDPOINT[kind], { code: "no_endpoint" });
    }
    return { baseUrl: e.baseUrl, apiKey: e.apiKey };
  }

  // The endpoint of a kind and the model to name: the call's, else the endpoint's.
  async #route(
    kind: EngineKind,
    options: { model?: string; signal?: AbortSignal },
  ): Promise<CallRoute> {
    const target = this.#target(kind);
    const model = options.model ?? await this.#model(kind, options);
    return { http: this.#http, target, model };
  }

  // The first reranker the embedding endpoint lists (remembered).
  async #rerankModel(options: { signal?: AbortSignal }): Promise<string> {
    if (this.#rerank !== undefined) return this.#rerank;
    const target = this.#target("embedding");
    const embedded = this.#mode === "embedded";
    return (this.#rerank = await listedRerankerOf(this.#http, target, embedded, options.signal));
  }

  // The endpoint's model: configured, detected, or the first of the kind its /models lists.
  async #model(kind: EngineKind, options: { signal?: AbortSignal }): Promise<string> {
    const e = kind === "chat" ? this.#chat : this.#embedding;
    if (e.model !== null) return e.model;
    return (e.model = await listedModelOf(this.#http, this.#target(kind), kind, options.signal));
  }
}
