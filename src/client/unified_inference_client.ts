/**
 * `UnifiedInferenceClient`: one client for chat, text generation and embeddings, whether the
 * models sit behind local engines, a gateway, the gateway code inside this process, or an
 * OpenAI-compatible cloud API. How `create()` finds them is documented in
 * `detect_endpoints.ts` (the detection rule).
 *
 * @module
 */
import { loadConfig } from "../config/env.ts";
import { ConfigurationError, ServiceError, ValidationError } from "../core/errors.ts";
import type { ChatCompletion } from "../protocol/chat_response.ts";
import type { ResponseObject } from "../protocol/responses_response.ts";
import { decodeFloat32Base64 } from "../protocol/embedding_response.ts";
import { readChatDeltas } from "./_chat_stream.ts";
import {
  checkConfig,
  checkSampling,
  checkUrl,
  type Endpoint,
  endpoint,
  findGateway,
  httpPolicy,
  info,
  NO_ENDPOINT,
} from "./_client_setup.ts";
import { ClientHttp, type FetchLike, type HttpTarget } from "./_http.ts";
import { startEngineAndWait } from "./_management.ts";
import { chatBody, firstOfKind, firstReranker, listedModels, toolCallsOf } from "./_wire.ts";
import { detectEndpoints, type DetectionOptions, probeService } from "./detect_endpoints.ts";
import type { EmbeddedControlPlane, StartEmbeddedControlPlane } from "../gateway/embedded_types.ts";
import { importLazily } from "../core/lazy_module.ts";
import type { EngineKind } from "../core/model_kind.ts";
import type {
  ChatInputMessage,
  ChatOptions,
  ChatResponse,
  ChatStreamDelta,
  ClientStatus,
  CreateForModelOptions,
  EmbedOptions,
  EndpointInfo,
  EndpointStatus,
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

interface ClientInit {
  mode: UnifiedClientMode;
  chat: Endpoint;
  embedding: Endpoint;
  config: UnifiedClientConfig;
  fetch?: FetchLike;
  controlPlaneUrl?: string;
  embedded?: EmbeddedControlPlane;
  probeTimeoutMs?: number;
}

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
    checkConfig(options);
    if (options.controlPlaneUrl !== undefined && options.embedded) {
      throw new ConfigurationError(
        "pass either controlPlaneUrl (use a running gateway) or embedded (run one in this " +
          "process), not both",
        { param: "controlPlaneUrl" },
      );
    }
    if (options.embedded) return await UnifiedInferenceClient.#createEmbedded(options);
    if (options.controlPlaneUrl !== undefined) {
      const base = checkUrl(options.controlPlaneUrl, "controlPlaneUrl");
      const config = loadConfig({ env: options.env, envFile: options.envFile });
      const key = options.apiKey ?? config.chatApiKey ?? null;
      return new UnifiedInferenceClient({
        mode: "control_plane",
        chat: endpoint(base, options.llmModel ?? config.chatModel, "control_plane", key),
        embedding: endpoint(
          base,
          options.embeddingModel ?? config.embeddingModel,
          "control_plane",
          options.embeddingApiKey ?? key,
        ),
        config: options,
        fetch: options.fetch,
        controlPlaneUrl: base,
        probeTimeoutMs: options.probeTimeoutMs,
      });
    }
    for (const field of ["llmBaseUrl", "embeddingBaseUrl"] as const) {
      if (options[field] !== undefined) checkUrl(options[field], field);
    }
    const found = await detectEndpoints(options);
    return new UnifiedInferenceClient({
      mode: "simple",
      chat: found.chat,
      embedding: found.embedding,
      config: options,
      fetch: options.fetch,
      probeTimeoutMs: options.probeTimeoutMs,
    });
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
    checkConfig(config);
    const chatBase = checkUrl(llmBaseUrl, "llmBaseUrl");
    const key = config.apiKey ??
      loadConfig({ env: config.env, envFile: config.envFile }).chatApiKey ?? null;
    return new UnifiedInferenceClient({
      mode: "control_plane",
      chat: endpoint(chatBase, llmModel, "control_plane", key),
      embedding: endpoint(
        checkUrl(embeddingBaseUrl, "embeddingBaseUrl"),
        embeddingModel,
        "control_plane",
        config.embeddingApiKey ?? key,
      ),
      config,
      fetch: config.fetch,
      controlPlaneUrl: chatBase,
    });
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
    if ((options as UnifiedClientOptions).embedded) {
      throw new ConfigurationError(
        "createForModel starts engines through a gateway; for a model inside this process use " +
          "create({ embedded: { chatModel } })",
        { param: "embedded" },
      );
    }
    if (typeof model !== "string" || model.trim() === "") {
      throw new ValidationError("model must be a non-empty model id", { param: "model" });
    }
    checkConfig(options);
    const config = loadConfig({ env: options.env, envFile: options.envFile });
    const key = options.apiKey ?? config.chatApiKey ?? null;
    const base = options.controlPlaneUrl !== undefined
      ? checkUrl(options.controlPlaneUrl, "controlPlaneUrl")
      : await findGateway(options, key);
    const http = new ClientHttp(httpPolicy(options), options.fetch);
    const adminKey = options.adminApiKey ?? config.adminApiKey ?? key;
    const ready = await startEngineAndWait(
      http,
      { baseUrl: base, apiKey: adminKey },
      model,
      options,
    );
    const chatModel = ready.kind === "chat" ? model : options.llmModel ?? config.chatModel;
    const embeddingModel = ready.kind === "embedding"
      ? model
      : options.embeddingModel ?? config.embeddingModel;
    return new UnifiedInferenceClient({
      mode: "control_plane",
      chat: endpoint(base, chatModel, "control_plane", key),
      embedding: endpoint(base, embeddingModel, "control_plane", options.embeddingApiKey ?? key),
      config: options,
      fetch: options.fetch,
      controlPlaneUrl: base,
      probeTimeoutMs: options.probeTimeoutMs,
    });
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
    const probe = async (e: Endpoint, kind: EngineKind): Promise<EndpointStatus> => {
      if (e.baseUrl === null || this.#closed) {
        return {
          ...info(e),
          available: false,
          models: [],
          randomWeights: [],
          detail: this.#closed ? "the client is closed" : "no endpoint configured",
        };
      }
      const seen = await probeService(e.baseUrl, e.apiKey, {
        probeTimeoutMs: this.#probeTimeoutMs,
        fetch: this.#fetch,
      });
      // Only the endpoint's kind: a gateway lists every model (rerankers with the embeddings).
      const serves = kind === "chat" ? ["chat"] : ["embedding", "rerank"];
      const models = seen.models.filter((m) => serves.includes(m.kind));
      return {
        ...info(e),
        // The model calls would use: the one set, else the first of its kind listed.
        model: e.model ?? firstOfKind(models, kind),
        available: seen.answered,
        models: models.map((m) => m.id),
        randomWeights: models.filter((m) => m.randomWeights).map((m) => m.id),
        detail: seen.detail,
      };
    };
    const [chat, embedding] = await Promise.all([
      probe(this.#chat, "chat"),
      probe(this.#embedding, "embedding"),
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
    const target = this.#target("chat");
    const model = options.model ?? await this.#model("chat", options);
    const body = chatBody(model, messages, options, this.#config.defaultSampling, false);
    const answer = await this.#http.json<ChatCompletion>(target, "/chat/completions", {
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
    const target = this.#target("chat");
    const model = options.model ?? await this.#model("chat", options);
    const body = chatBody(model, messages, options, this.#config.defaultSampling, true);
    const open = await this.#http.stream(target, "/chat/completions", {
      method: "POST",
      body,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    yield* readChatDeltas(open);
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
    const target = this.#target("chat");
    const model = options.model ?? await this.#model("chat", options);
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
    const answer = await this.#http.json<ResponseObject>(target, "/responses", {
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
    const target = this.#target("embedding");
    const model = options.model ?? await this.#model("embedding", options);
    const size = Math.max(1, this.#config.embedBatchSize ?? 256);
    const out: number[][] = [];
    for (let start = 0; start < list.length; start += size) {
      const input = list.slice(start, start + size);
      const body: Record<string, unknown> = { model, input, encoding_format: "float" };
      if (options.dimensions !== undefined) body.dimensions = options.dimensions;
      const answer = await this.#http.json<{ data?: { index?: number; embedding?: unknown }[] }>(
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
    const body: Record<string, unknown> = { model, query, documents, return_documents: false };
    if (options.topN !== undefined) body.top_n = options.topN;
    if (options.rawScores !== undefined) body.raw_scores = options.rawScores;
    if (options.truncate !== undefined) body.truncate = options.truncate;
    const answer = await this.#http.json<
      { results?: { index?: unknown; relevance_score?: unknown }[] }
    >(
      target,
      "/rerank",
      { method: "POST", body, signal: options.signal, timeoutMs: options.timeoutMs },
    );
    const results = Array.isArray(answer?.results) ? answer.results : null;
    const valid = results?.every((r) =>
      Number.isInteger(r.index) && (r.index as number) >= 0 &&
      (r.index as number) < documents.length && typeof r.relevance_score === "number"
    );
    if (!results || !valid) {
      throw new ServiceError(`${target.baseUrl}/rerank answered without valid results`, {
        code: "bad_response",
      });
    }
    return results
      .map((r) => ({
        index: r.index as number,
        score: r.relevance_score as number,
        document: documents[r.index as number],
      }))
      .sort((a, b) => b.score - a.score);
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
    const kind = options.kind ?? "chat";
    const target = this.#target(kind);
    const model = options.model ?? await this.#model(kind, options);
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
    const answer = await this.#http.json<
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

  /** The text of token ids, by the model's tokenizer (`tokenize`'s inverse). */
  async detokenize(
    tokens: readonly number[],
    options: Pick<TokenizeOptions, "model" | "kind" | "signal" | "timeoutMs"> = {},
  ): Promise<string> {
    const kind = options.kind ?? "chat";
    const target = this.#target(kind);
    const model = options.model ?? await this.#model(kind, options);
    const answer = await this.#http.json<{ prompt?: unknown }>(target, "/detokenize", {
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

  // Loads the engines and the gateway in this process.
  static async #createEmbedded(options: UnifiedClientOptions): Promise<UnifiedInferenceClient> {
    // Loaded only here, so the other modes never load the engine runtime (see lazy_module.ts).
    const { startEmbeddedControlPlane } = await importLazily<
      { startEmbeddedControlPlane: StartEmbeddedControlPlane }
    >(new URL("../gateway/embedded_control_plane.ts", import.meta.url));
    const settings = typeof options.embedded === "object" ? options.embedded : {};
    const plane = await startEmbeddedControlPlane({
      env: options.env,
      envFile: options.envFile,
      ...settings,
    });
    return new UnifiedInferenceClient({
      mode: "embedded",
      chat: endpoint(plane.baseUrl, options.llmModel ?? plane.models.chat, "embedded", null),
      embedding: endpoint(
        plane.baseUrl,
        options.embeddingModel ?? plane.models.embedding,
        "embedded",
        null,
      ),
      config: options,
      fetch: plane.fetch,
      embedded: plane,
      probeTimeoutMs: options.probeTimeoutMs ?? 5000,
    });
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

  // The first reranker the embedding endpoint lists (remembered).
  async #rerankModel(options: { signal?: AbortSignal }): Promise<string> {
    if (this.#rerank !== undefined) return this.#rerank;
    const target = this.#target("embedding");
    const answer = await this.#http.json<unknown>(target, "/models", { signal: options.signal });
    const found = firstReranker(listedModels(answer));
    if (found === null) {
      // In embedded mode no server is involved: the reranker is loaded in this process or not at all.
      throw new ConfigurationError(
        this.#mode === "embedded"
          ? "the embedded control plane serves no reranker; load one in this process with " +
            'create({ embedded: { rerankModel: "<hub id or folder>" } }) (e.g. ' +
            "Xenova/ms-marco-MiniLM-L-6-v2, or demo/rerank with random weights)"
          : `${target.baseUrl}/models lists no reranker; serve one (svc llm serve ` +
            `--with-embedding) or pass the model (rerankModel, or the model option)`,
        { code: "no_model", param: "rerankModel" },
      );
    }
    return (this.#rerank = found);
  }

  // The endpoint's model: configured, detected, or the first of the kind its /models lists.
  async #model(kind: EngineKind, options: { signal?: AbortSignal }): Promise<string> {
    const e = kind === "chat" ? this.#chat : this.#embedding;
    if (e.model !== null) return e.model;
    const answer = await this.#http.json<unknown>(this.#target(kind), "/models", {
      signal: options.signal,
    });
    const found = firstOfKind(listedModels(answer), kind);
    if (found === null) {
      const variable = kind === "chat" ? "SVC_CHAT_MODEL (or llmModel)" : "SVC_EMBEDDING_MODEL " +
        "(or embeddingModel)";
      throw new ConfigurationError(
        `${e.baseUrl}/models lists no ${kind} model; set ${variable} to the model to use`,
        { code: "no_model", param: kind === "chat" ? "SVC_CHAT_MODEL" : "SVC_EMBEDDING_MODEL" },
      );
    }
    e.model = found;
    return found;
  }
}
