/**
 * The Responses API's answer: the `response` object and its stream events, assembled from what a
 * chat completion gives (text, tool-call pieces, a finish reason, usage). The same assembler
 * builds a JSON answer (feed everything, read `response`) and a stream (send what each call
 * returns), so the two always agree.
 *
 * Item ids carry the response's id (`msg_<hex>_<n>`, `fc_<hex>_<n>`: output item n of
 * `resp_<hex>`), so an `item_reference` finds its stored response without an index.
 *
 * @module
 */
import type { FinishReason, Usage } from "../core/inference_types.ts";
import type { WireTokenLogprob } from "./chat_response.ts";
import type { ResponsesRequest, WireInputItem } from "./responses_request.ts";
import type {
  ResponseEvent,
  ResponseFunctionCallItem,
  ResponseMessageItem,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputText,
  ResponseReasoningItem,
} from "./responses_object.ts";

/** OpenAI's error object, as an error answer or event carries it. */
interface ErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** A new response id: `resp_` and 32 hex digits. */
function newResponseId(): string {
  return `resp_${crypto.randomUUID().replaceAll("-", "")}`;
}

const ITEM_ID = /^(?:msg|fc|rs)_([0-9a-f]{32})_(\d+)$/;

/**
 * The response id and output index an item id points to, or undefined for an id not ours.
 *
 * @example
 * ```ts
 * import { parseItemId } from "./responses_response.ts";
 * parseItemId(`msg_${"a".repeat(32)}_1`); // { responseId: "resp_aaa…", index: 1 }
 * ```
 */
export function parseItemId(id: string): { responseId: string; index: number } | undefined {
  const m = ITEM_ID.exec(id);
  return m ? { responseId: `resp_${m[1]}`, index: Number(m[2]) } : undefined;
}

/** An output item as an input item of a later turn (for `item_reference`). */
export function outputItemAsInput(item: ResponseOutputItem): WireInputItem {
  if (item.type === "function_call") {
    const { call_id, name, arguments: args } = item;
    return { type: "function_call", call_id, name, arguments: args };
  }
  if (item.type === "reasoning") return { type: "reasoning", id: item.id };
  return { role: "assistant", content: item.content.map((c) => c.text).join("") };
}

/**
 * Builds one response from chat output, as events and as the final object.
 *
 * @example
 * ```ts
 * import { ResponseAssembler } from "./responses_response.ts";
 * const a = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
 * a.start();
 * a.text("Hello");
 * a.finish("stop", { promptTokens: 1, completionTokens: 1 });
 * a.response.output; // [{ type: "message", … "Hello" }]
 * ```
 */
export class ResponseAssembler {
  readonly response: ResponseObject;
  #sequence = 0;
  /** The item being written (the others are done). */
  #open: ResponseOutputItem | undefined;
  /** Function call items by the chat stream's tool call index. */
  #calls = new Map<number, ResponseFunctionCallItem>();
  /** Log-probabilities of tokens whose text has not come (yet). */
  #pending: WireTokenLogprob[] = [];
  #hex: string;

  constructor(req: ResponsesRequest, options: { model: string }) {
    const id = newResponseId();
    this.#hex = id.slice("resp_".length);
    this.response = {
      id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "in_progress",
      error: null,
      incomplete_details: null,
      instructions: req.instructions ?? null,
      max_output_tokens: req.max_output_tokens ?? null,
      model: options.model,
      output: [],
      parallel_tool_calls: req.parallel_tool_calls ?? true,
      previous_response_id: req.previous_response_id ?? null,
      reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
      store: req.store ?? true,
      temperature: req.temperature ?? null,
      text: { format: req.text?.format ?? { type: "text" } },
      tool_choice: req.tool_choice ?? "auto",
      tools: req.tools ?? [],
      top_p: req.top_p ?? null,
      top_logprobs: req.top_logprobs ?? null,
      max_tool_calls: req.max_tool_calls ?? null,
      truncation: "disabled",
      usage: null,
      user: req.user ?? null,
      metadata: req.metadata ?? {},
    };
  }

  /** `response.created` and `response.in_progress`. */
  start(): ResponseEvent[] {
    const snapshot = () => structuredClone(this.response);
    return [
      this.#event("response.created", { response: snapshot() }),
      this.#event("response.in_progress", { response: snapshot() }),
    ];
  }

  /**
   * A piece of the answer's text and the log-probabilities of the tokens that made it (when asked
   * for). Those of a piece without text wait for the next text: its tokens' text was held back.
   */
  text(delta: string, logprobs: readonly WireTokenLogprob[] = []): ResponseEvent[] {
    if (delta === "") {
      this.#pending.push(...logprobs);
      return [];
    }
    // Tokens since the reasoning ended are its closing tag's, not the answer's.
    if (this.#open?.type === "reasoning") this.#pending = [];
    this.#pending.push(...logprobs);
    const events = this.#open?.type === "message" ? [] : this.#openMessage();
    const part = (this.#open as ResponseMessageItem).content[0];
    const own = this.#pending;
    this.#pending = [];
    part.text += delta;
    part.logprobs.push(...own);
    events.push(this.#event("response.output_text.delta", {
      ...this.#where(this.#open!),
      content_index: 0,
      delta,
      logprobs: own,
    }));
    return events;
  }

  /** A piece of the model's reasoning (a `<think>` block, split off by the chat path). */
  reasoning(delta: string): ResponseEvent[] {
    if (delta === "") return [];
    this.#pending = []; // the reasoning's tokens
    const events: ResponseEvent[] = [];
    if (this.#open?.type !== "reasoning") {
      events.push(...this.#close("completed"));
      const item: ResponseReasoningItem = {
        type: "reasoning",
        id: this.#itemId("rs"),
        status: "in_progress",
        summary: [],
        content: [{ type: "reasoning_text", text: "" }],
      };
      events.push(this.#add(item));
    }
    const item = this.#open as ResponseReasoningItem;
    item.content[0].text += delta;
    events.push(this.#event("response.reasoning_text.delta", {
      ...this.#where(item),
      content_index: 0,
      delta,
    }));
    return events;
  }

  /** A piece of tool call `index`: its id and name first, then fragments of its arguments. */
  toolCall(
    index: number,
    piece: { id?: string; name?: string; arguments?: string },
  ): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    this.#pending = []; // the call's markup tokens
    let call = this.#calls.get(index);
    if (call === undefined) {
      events.push(...this.#close("completed"));
      call = {
        type: "function_call",
        id: this.#itemId("fc"),
        status: "in_progress",
        call_id: piece.id ?? `call_${this.#hex.slice(0, 16)}_${index}`,
        name: piece.name ?? "",
        arguments: "",
      };
      this.#calls.set(index, call);
      events.push(this.#add(call));
    }
    if (piece.arguments) {
      call.arguments += piece.arguments;
      events.push(this.#event("response.function_call_arguments.delta", {
        ...this.#where(call),
        delta: piece.arguments,
      }));
    }
    return events;
  }

  /** Closes the last item and ends the response (`response.completed`, or `incomplete` when cut). */
  finish(
    reason: FinishReason,
    usage: Usage,
  ): ResponseEvent[] {
    const status = reason === "length" ? "incomplete" : "completed";
    // An answer with no text and no call still has its (empty) message, as OpenAI's do.
    const answered = this.response.output.some((item) => item.type !== "reasoning");
    const events = answered ? [] : this.#openMessage();
    events.push(...this.#close(status));
    Object.assign(this.response, {
      status,
      incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
      usage: {
        input_tokens: usage.promptTokens,
        input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
        output_tokens: usage.completionTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.promptTokens + usage.completionTokens,
      },
    });
    events.push(this.#event(`response.${status}`, { response: structuredClone(this.response) }));
    return events;
  }

  /**
   * The `error` event that ends a stream which failed after it started, in OpenAI's shape (`code`,
   * `message`, `param` at the top, as the AI SDK and the `openai` SDKs read them) with the usual
   * error object beside them too (for readers of `data.error`). Nothing follows it.
   */
  error(body: { error: ErrorObject }): ResponseEvent {
    const { code, message, param } = body.error;
    return this.#event("error", { code, message, param, error: body.error });
  }

  #openMessage(): ResponseEvent[] {
    const events = this.#close("completed");
    const message: ResponseMessageItem = {
      type: "message",
      id: this.#itemId("msg"),
      status: "in_progress",
      role: "assistant",
      content: [],
    };
    const part: ResponseOutputText = {
      type: "output_text",
      text: "",
      annotations: [],
      logprobs: [],
    };
    events.push(
      this.#add(message),
      this.#event("response.content_part.added", {
        ...this.#where(message),
        content_index: 0,
        part: structuredClone(part),
      }),
    );
    message.content.push(part);
    return events;
  }

  // A new item, open until the next one starts or the response ends.
  #add(item: ResponseOutputItem): ResponseEvent {
    this.response.output.push(item);
    this.#open = item;
    return this.#event("response.output_item.added", {
      output_index: this.response.output.length - 1,
      item: structuredClone(item),
    });
  }

  // Ends the open item with its `done` events.
  #close(status: "completed" | "incomplete"): ResponseEvent[] {
    const item = this.#open;
    if (item === undefined) return [];
    this.#open = undefined;
    item.status = status;
    const where = this.#where(item);
    const events: ResponseEvent[] = [];
    if (item.type === "message") {
      const part = item.content[0];
      events.push(
        this.#event("response.output_text.done", {
          ...where,
          content_index: 0,
          text: part.text,
          logprobs: part.logprobs,
        }),
        this.#event("response.content_part.done", {
          ...where,
          content_index: 0,
          part: structuredClone(part),
        }),
      );
    } else if (item.type === "reasoning") {
      events.push(this.#event("response.reasoning_text.done", {
        ...where,
        content_index: 0,
        text: item.content[0].text,
      }));
    } else {
      events.push(this.#event("response.function_call_arguments.done", {
        ...where,
        name: item.name,
        arguments: item.arguments,
      }));
    }
    events.push(this.#event("response.output_item.done", {
      output_index: where.output_index,
      item: structuredClone(item),
    }));
    return events;
  }

  #where(item: ResponseOutputItem): { item_id: string; output_index: number } {
    return { item_id: item.id, output_index: this.response.output.indexOf(item) };
  }

  #itemId(prefix: "msg" | "fc" | "rs"): string {
    return `${prefix}_${this.#hex}_${this.response.output.length}`;
  }

  #event(type: string, fields: Record<string, unknown>): ResponseEvent {
    return { type, sequence_number: this.#sequence++, ...fields };
  }
}
