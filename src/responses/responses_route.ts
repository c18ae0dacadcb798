/**
 * `POST /v1/responses`, `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items` (OpenAI's Responses API), shared by the engine server and
 * the gateway. A request is expanded (its previous responses' turns, referenced items)
 * into a chat completion request, run by `runChat` (the engine: its own chat route, in process;
 * the gateway: the dispatcher, like any chat request), and the chat stream is rewritten as a
 * response, JSON or stream.
 *
 * @module
 */
import { NotFoundError, ValidationError } from "../core/errors.ts";
import type { ChatCompletionRequest, WireChatMessage } from "../protocol/chat_request.ts";
import type { ChatCompletion, ChatCompletionChunk } from "../protocol/chat_response.ts";
import { errorFromStreamEvent } from "../protocol/error_from_response.ts";
import { parseResponsesRequest, type WireInputItem } from "../protocol/responses_request.ts";
import { inputToMessages, responsesParamOf, toChatRequest } from "../protocol/responses_to_chat.ts";
import {
  inputItemsOf,
  inputItemsPage,
  parseInputItemsQuery,
} from "../protocol/responses_input_items.ts";
import {
  outputItemAsInput,
  parseItemId,
  ResponseAssembler,
} from "../protocol/responses_response.ts";
import type {
  ResponseEvent,
  ResponseObject,
  ResponseOutputItem,
} from "../protocol/responses_object.ts";
import { readSseData } from "../protocol/sse.ts";
import type { AdmissionLimits, FinishReason, Usage } from "../core/inference_types.ts";
import { checkLimit, checkMessageCount } from "../engine/admission_limits.ts";
import { describeErrorResponse } from "../http/error_response.ts";
import type { RouteContext, RouteDefinition } from "../http/http_app.ts";
import { type ResponseStore, SHARED_OWNER, type StoredResponse } from "./response_store.ts";
import { sseResponse } from "../http/sse_response.ts";

/** Header of a response the client asked to store that was not stored, saying why. */
export const STORE_WARNING_HEADER = "x-svc-store-warning";

/** What the routes need. */
export interface ResponsesRouteDeps {
  store: ResponseStore;
  /**
   * Runs a chat completion request; its error (answered or thrown) reaches the client with the
   * Responses field names.
   */
  runChat(ctx: RouteContext, body: ChatCompletionRequest): Promise<Response>;
  /**
   * Who a request stores its response as, and whose responses it may read, continue or delete
   * (called after the request's key was checked). Default: {@link SHARED_OWNER} for everyone.
   */
  ownerOf?: (req: Request) => string;
  /**
   * The admission limits of the engine a request body names (on the gateway, its own): its
   * `input` items are counted against `maxMessages` before the body is validated. Unset: the
   * chat route counts the messages of the chat request it gets.
   */
  limitsOf?: (body: unknown) => Readonly<AdmissionLimits>;
}

/**
 * The Responses API routes.
 *
 * @example
 * ```ts
 * import { responsesRoutes } from "./responses_route.ts";
 * import { ResponseStore } from "./response_store.ts";
 * const routes = responsesRoutes({
 *   store: new ResponseStore(),
 *   runChat: () => Promise.resolve(new Response(null, { status: 503 })),
 * });
 * ```
 */
export function responsesRoutes(deps: ResponsesRouteDeps): RouteDefinition[] {
  const ownerOf = (ctx: RouteContext) => deps.ownerOf?.(ctx.req) ?? SHARED_OWNER;
  return [
    { method: "POST", path: "/v1/responses", handler: (ctx) => createResponse(ctx, deps) },
    {
      method: "GET",
      path: "/v1/responses/:id",
      name: "/v1/responses/{id}",
      handler: async (ctx) =>
        Response.json((await stored(deps.store, ctx.params.id, ownerOf(ctx))).response),
    },
    {
      method: "DELETE",
      path: "/v1/responses/:id",
      name: "/v1/responses/{id}",
      handler: async (ctx) => {
        const id = ctx.params.id;
        if (!(await deps.store.delete(id, ownerOf(ctx)))) throw notFound(id);
        return Response.json({ id, object: "response", deleted: true });
      },
    },
    {
      method: "GET",
      path: "/v1/responses/:id/input_items",
      name: "/v1/responses/{id}/input_items",
      handler: async (ctx) => {
        const query = parseInputItemsQuery(ctx.url.searchParams);
        const { input } = await stored(deps.store, ctx.params.id, ownerOf(ctx));
        return Response.json(inputItemsPage(input ?? [], query));
      },
    },
  ];
}

async function createResponse(ctx: RouteContext, deps: ResponsesRouteDeps): Promise<Response> {
  const body = await ctx.readJson();
  const limits = deps.limitsOf?.(body);
  if (limits) checkMessageCount(limits, body, "input");
  const req = parseResponsesRequest(body);
  const { store } = deps;
  // Another owner's responses are unknown to this request: not continued, no item referenced.
  const owner = deps.ownerOf?.(ctx.req) ?? SHARED_OWNER;
  let history: WireChatMessage[] = [];
  const previousId = req.previous_response_id ?? null;
  if (previousId !== null) {
    const chain = await store.conversation(previousId, owner);
    if (chain.missing !== undefined) throw previousNotFound(previousId, chain.missing);
    history = chain.messages;
  }
  const callIds = new Set(
    history.flatMap((m) => m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []),
  );
  const own = await inputToMessages(req.input, (id) => findItem(store, id, owner), { callIds });
  const chatRequest = toChatRequest(req, [...history, ...own]);
  if (limits && previousId !== null) {
    // The chat route would count these too, but name `input`: here it is the chain that is long.
    checkLimit(limits, "maxMessages", chatRequest.messages.length, {
      what: "messages of the conversation (the previous responses' turns, instructions and input)",
      param: "previous_response_id",
    });
  }
  // Only this turn's input: OpenAI's `input_items` of a chained response leave out earlier turns.
  const input = await inputItemsOf(req.input, (id) => findOutputItem(store, id, owner));
  let res: Response;
  try {
    res = await deps.runChat(ctx, chatRequest);
  } catch (err) {
    res = describeErrorResponse(err, { logger: ctx.logger, requestId: ctx.requestId }).response;
  }
  if (!res.ok) return await withResponsesParam(res, ctx);
  const assembler = new ResponseAssembler(req, { model: req.model });
  // Why the response was not stored, though asked to be (the answer goes out all the same).
  const save = async (): Promise<string | undefined> => {
    if (req.store === false) return undefined;
    const output = await inputToMessages(assembler.response.output.map(outputItemAsInput), noItems);
    // This turn only: the earlier ones are found through the previous response.
    const { warning } = await store.put({
      response: assembler.response,
      input,
      messages: [...own, ...output],
      previousResponseId: previousId,
    }, owner);
    if (warning !== undefined) assembler.response.store = false;
    return warning;
  };
  // The chat answer is always a stream (see toChatRequest): one reading of it makes both answers.
  // A client that leaves cancels the chat stream at once, even while no token is coming.
  const abort = new AbortController();
  const chat = res.body!.pipeThrough(new TransformStream(), { signal: abort.signal });
  const events = streamEvents(chat, assembler, save);
  if (req.stream !== true) {
    let next = await events.next();
    while (!next.done) next = await events.next();
    const answer = withSvcHeaders(Response.json(assembler.response), res);
    if (next.value !== undefined) answer.headers.set(STORE_WARNING_HEADER, next.value);
    return answer;
  }
  const stream = sseResponse(events, {
    abort,
    logger: ctx.logger,
    requestId: ctx.requestId,
    onError: ctx.countError,
    eventName: (e) => (e as Partial<ResponseEvent>).type,
    // OpenAI's `error` event (`type`, `sequence_number`, `code`, `message`, `param`).
    errorEvent: (body) => assembler.error(body),
    done: false,
  });
  return withSvcHeaders(stream, res);
}

// Our own headers of the chat answer (the gateway's `x-svc-backend`) and a key's rate limits
// (`x-ratelimit-*`) stay on the response.
function withSvcHeaders(answer: Response, chat: Response): Response {
  for (const [name, value] of chat.headers) {
    if (name.startsWith("x-svc-") || name.startsWith("x-ratelimit-")) {
      answer.headers.set(name, value);
    }
  }
  return answer;
}

// The chat stream's chunks as response events; the response is stored before its last event, so
// a client that chains at once finds it. A stream's headers are gone by then: a response not
// stored says so in its last event (`store: false`). Returns why it was not stored.
async function* streamEvents(
  chat: ReadableStream<Uint8Array>,
  assembler: ResponseAssembler,
  save: () => Promise<string | undefined>,
): AsyncGenerator<ResponseEvent, string | undefined, undefined> {
  yield* assembler.start();
  let reason: FinishReason = "stop";
  let usage: Usage = { promptTokens: 0, completionTokens: 0 };
  for await (const data of readSseData(chat)) {
    if (data === "[DONE]") break;
    const chunk = JSON.parse(data) as ChatCompletionChunk | { error: unknown };
    if ("error" in chunk) throw errorFromStreamEvent(chunk, "the chat completion");
    if (chunk.usage) usage = usageOf(chunk as { usage: ChatCompletion["usage"] });
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    yield* assembler.reasoning(choice.delta.reasoning_content ?? "");
    yield* assembler.text(choice.delta.content ?? "", choice.logprobs?.content ?? []);
    for (const call of choice.delta.tool_calls ?? []) {
      yield* assembler.toolCall(call.index, { id: call.id, ...call.function });
    }
    if (choice.finish_reason) reason = choice.finish_reason;
  }
  const last = assembler.finish(reason, usage);
  const warning = await save();
  if (warning !== undefined) {
    for (const event of last) {
      if (event.response) (event.response as ResponseObject).store = false;
    }
  }
  yield* last;
  return warning;
}

function usageOf(body: { usage?: ChatCompletion["usage"] | null }) {
  return {
    promptTokens: body.usage?.prompt_tokens ?? 0,
    completionTokens: body.usage?.completion_tokens ?? 0,
    cachedTokens: body.usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

// A chat error answer naming the Responses field the client sent instead of the chat field; its
// code is the one metrics count.
async function withResponsesParam(res: Response, ctx: RouteContext): Promise<Response> {
  const text = await res.text();
  const headers = new Headers(res.headers);
  headers.delete("content-length"); // the body may change
  try {
    const body = JSON.parse(text) as {
      error?: { param?: unknown; message?: unknown; code?: unknown };
    };
    const { error } = body;
    if (error && typeof error.code === "string") ctx.setErrorCode(error.code);
    if (error && typeof error.param === "string") {
      const param = responsesParamOf(error.param);
      if (typeof error.message === "string") {
        // The field as a whole name, quoted or not ("max_tokens asks for …", "(at tools.0.…)").
        error.message = error.message.replace(wholeName(error.param), param);
      }
      error.param = param;
      return new Response(JSON.stringify(body), { status: res.status, headers });
    }
  } catch {
    // Not JSON: passed on as it came.
  }
  return new Response(text, { status: res.status, headers });
}

// Every place `name` (a field path) appears in a text, not inside a longer name.
function wholeName(name: string): RegExp {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w.])${escaped}(?!\\w)`, "g");
}

// An `item_reference`: the output item of a stored response its id points to.
async function findOutputItem(
  store: ResponseStore,
  id: string,
  owner: string,
): Promise<ResponseOutputItem | undefined> {
  const at = parseItemId(id);
  if (at === undefined) return undefined;
  const item = (await store.get(at.responseId, owner))?.response.output[at.index];
  return item?.id === id ? item : undefined;
}

async function findItem(
  store: ResponseStore,
  id: string,
  owner: string,
): Promise<WireInputItem | undefined> {
  const item = await findOutputItem(store, id, owner);
  return item && outputItemAsInput(item);
}

const noItems = () => Promise.resolve(undefined);

// Another owner's response is answered as unknown (404, not 403: its existence is not told).
async function stored(store: ResponseStore, id: string, owner: string): Promise<StoredResponse> {
  const entry = await store.get(id, owner);
  if (entry === undefined) throw notFound(id);
  return entry;
}

// The previous response, or one earlier in its chain, is gone: OpenAI's 400 for a missing one.
function previousNotFound(previous: string, missing: string): ValidationError {
  const where = missing === previous
    ? `Previous response with id '${previous.slice(0, 100)}' not found: it`
    : `Response with id '${missing.slice(0, 100)}', earlier in the chain of previous response ` +
      `'${previous.slice(0, 100)}', not found: it`;
  return new ValidationError(
    `${where} was not stored (store: false), was evicted, expired or deleted, or was made by ` +
      "another server or with another API key.",
    { param: "previous_response_id", code: "previous_response_not_found" },
  );
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(
    `Response with id '${id.slice(0, 100)}' not found: it was not stored (store: false), was ` +
      "evicted or deleted, or was made by another server or with another API key.",
    { param: "response_id", code: "response_not_found" },
  );
}
