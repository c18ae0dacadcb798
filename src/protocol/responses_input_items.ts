/**
 * `GET /v1/responses/{id}/input_items` (OpenAI's Responses API): a stored response's input as
 * items with ids, and the cursor-paged list of them (`limit`, `order`, `after`).
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";
import type { WireInputItem, WireInputPart } from "./responses_request.ts";
import type { ResponseMessageItem, ResponseOutputItem } from "./responses_object.ts";

/** A user, system or developer message of the input. */
export interface InputMessageItem {
  /** Always `message`. */
  type: "message";
  /** The id the client gave, else a new `msg_…`. */
  id: string;
  /** Always `completed`. */
  status: "completed";
  /** Who wrote it. */
  role: "user" | "system" | "developer";
  /** Its parts as given (a string is one `input_text` part). */
  content: WireInputPart[];
}

/** A function call's result in the input. */
export interface FunctionCallOutputItem {
  /** Always `function_call_output`. */
  type: "function_call_output";
  /** The id the client gave, else a new `fco_…`. */
  id: string;
  /** Always `completed`. */
  status: "completed";
  /** The call it answers. */
  call_id: string;
  /** As given. */
  output: string | WireInputPart[];
}

/**
 * An input item as listed: assistant messages, function calls and reasoning have the output
 * items' shape (an `item_reference` is listed as the stored item it names).
 */
export type ResponseInputItem = ResponseOutputItem | InputMessageItem | FunctionCallOutputItem;

/** Finds a stored output item by id; undefined when unknown. */
export type OutputItemResolver = (id: string) => Promise<ResponseOutputItem | undefined>;

/**
 * A request's `input` as items with ids, to be stored with its response.
 *
 * @example
 * ```ts
 * import { inputItemsOf } from "./responses_input_items.ts";
 * await inputItemsOf("hi", async () => undefined);
 * // [{ type: "message", id: "msg_…", role: "user", content: [{ type: "input_text", … }] … }]
 * ```
 */
export async function inputItemsOf(
  input: string | readonly WireInputItem[],
  resolve: OutputItemResolver,
): Promise<ResponseInputItem[]> {
  if (typeof input === "string") input = [{ role: "user", content: input }];
  const items: ResponseInputItem[] = [];
  for (const item of input) {
    if (item.type === "item_reference") {
      // Already checked by the chat conversion; one deleted since is left out.
      const found = await resolve(item.id);
      if (found !== undefined) items.push(structuredClone(found));
    } else if (item.type === "function_call") {
      const { call_id, name, arguments: args } = item;
      const id = item.id ?? newId("fc");
      items.push({
        type: "function_call",
        id,
        status: "completed",
        call_id,
        name,
        arguments: args,
      });
    } else if (item.type === "function_call_output") {
      const { call_id, output } = item;
      const id = item.id ?? newId("fco");
      items.push({ type: "function_call_output", id, status: "completed", call_id, output });
    } else if (item.type === "reasoning") {
      const id = item.id ?? newId("rs");
      items.push({ type: "reasoning", id, status: "completed", summary: [], content: [] });
    } else if (item.role === "assistant") {
      items.push(assistantItem(item.id ?? newId("msg"), item.content));
    } else {
      const content = typeof item.content === "string"
        ? [{ type: "input_text" as const, text: item.content }]
        : item.content.map(({ type, text }) => ({ type, text }));
      const id = item.id ?? newId("msg");
      items.push({ type: "message", id, status: "completed", role: item.role, content });
    }
  }
  return items;
}

// An assistant turn of the input, shaped as the output message it usually was.
function assistantItem(
  id: string,
  content: string | readonly WireInputPart[],
): ResponseMessageItem {
  const texts = typeof content === "string" ? [content] : content.map((p) => p.text);
  return {
    type: "message",
    id,
    status: "completed",
    role: "assistant",
    content: texts.map((text) => ({ type: "output_text", text, annotations: [], logprobs: [] })),
  };
}

// Not of the `msg_<hex>_<n>` form of output items, so never taken for one (parseItemId).
function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The query of `GET /v1/responses/{id}/input_items`. */
export interface InputItemsQuery {
  /** 1-100 items per page (default 20). */
  limit: number;
  /** `desc` (newest first, the default, as OpenAI) or `asc`. */
  order: "asc" | "desc";
  /** List the items after this one (in `order`). */
  after?: string;
}

/**
 * Reads the query parameters; a bad `limit` or `order` is a `ValidationError` naming it.
 * `include` (extra fields) is accepted and ignored: the items have no optional fields.
 *
 * @example
 * ```ts
 * import { parseInputItemsQuery } from "./responses_input_items.ts";
 * parseInputItemsQuery(new URLSearchParams("limit=5")); // { limit: 5, order: "desc" }
 * ```
 */
export function parseInputItemsQuery(params: URLSearchParams): InputItemsQuery {
  const rawLimit = params.get("limit");
  const limit = rawLimit === null ? 20 : Number(rawLimit);
  if (rawLimit === "" || !Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new ValidationError(
      `Invalid value for 'limit': expected a whole number from 1 to 100, got '${
        rawLimit?.slice(0, 20)
      }'.`,
      { param: "limit", code: "invalid_value" },
    );
  }
  const order = params.get("order") ?? "desc";
  if (order !== "asc" && order !== "desc") {
    throw new ValidationError(
      `Invalid value for 'order': expected 'asc' or 'desc', got '${order.slice(0, 20)}'.`,
      { param: "order", code: "invalid_value" },
    );
  }
  const after = params.get("after") || undefined;
  return after === undefined ? { limit, order } : { limit, order, after };
}

/** One page of input items, as OpenAI lists them. */
export interface InputItemList {
  /** Always `list`. */
  object: "list";
  /** The page's items, in the order asked for. */
  data: ResponseInputItem[];
  /** The first item's id (null when the page is empty). */
  first_id: string | null;
  /** The last item's id: pass it as `after` for the next page (null when empty). */
  last_id: string | null;
  /** Whether more items follow this page. */
  has_more: boolean;
}

/**
 * The page of `items` (stored oldest first) that `query` asks for; an `after` id that is not
 * among them is a `ValidationError` naming `after`.
 *
 * @example
 * ```ts
 * import { inputItemsPage } from "./responses_input_items.ts";
 * inputItemsPage([], { limit: 20, order: "desc" });
 * // { object: "list", data: [], first_id: null, last_id: null, has_more: false }
 * ```
 */
export function inputItemsPage(
  items: readonly ResponseInputItem[],
  query: InputItemsQuery,
): InputItemList {
  const ordered = query.order === "asc" ? [...items] : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === query.after);
    if (at < 0) {
      throw new ValidationError(
        `Invalid value for 'after': no input item of this response has the id '${
          query.after.slice(0, 100)
        }'.`,
        { param: "after", code: "invalid_value" },
      );
    }
    start = at + 1;
  }
  const data = ordered.slice(start, start + query.limit);
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + query.limit < ordered.length,
  };
}
