/**
 * The objects of the Responses API's answer: the `response`, its output items and usage, and
 * the stream's events.
 *
 * @module
 */
import type { WireTokenLogprob } from "./chat_response.ts";

/** An output message item. */
export interface ResponseMessageItem {
  /** Always `message`. */
  type: "message";
  /** The item id (`msg_…`), which names its response and index. */
  id: string;
  /** `incomplete` when `max_output_tokens` cut it. */
  status: "in_progress" | "completed" | "incomplete";
  /** Always `assistant`. */
  role: "assistant";
  /** The text, as one `output_text` part. */
  content: ResponseOutputText[];
}

/** The text of a message item. */
export interface ResponseOutputText {
  /** Always `output_text`. */
  type: "output_text";
  /** The answer. */
  text: string;
  /** Always empty: no citations. */
  annotations: [];
  /** Its tokens' log-probabilities when asked for (`include`, `top_logprobs`); else empty. */
  logprobs: WireTokenLogprob[];
}

/** An output function call item. */
export interface ResponseFunctionCallItem {
  /** Always `function_call`. */
  type: "function_call";
  /** The item id (`fc_…`). */
  id: string;
  /** `incomplete` when the output was cut. */
  status: "in_progress" | "completed" | "incomplete";
  /** The id a `function_call_output` item answers with. */
  call_id: string;
  /** The function called. */
  name: string;
  /** Its arguments, as JSON text. */
  arguments: string;
}

/** An output reasoning item: the model's `<think>` block, as text. */
export interface ResponseReasoningItem {
  /** Always `reasoning`. */
  type: "reasoning";
  /** The item id (`rs_…`). */
  id: string;
  /** `incomplete` when the output was cut. */
  status: "in_progress" | "completed" | "incomplete";
  /** Always empty: the model writes no summary. */
  summary: [];
  /** The reasoning text. */
  content: { type: "reasoning_text"; text: string }[];
}

/** An output item. */
export type ResponseOutputItem =
  | ResponseMessageItem
  | ResponseFunctionCallItem
  | ResponseReasoningItem;

/** Token counts of a response. */
export interface ResponseUsage {
  /** Prompt tokens, the previous turns included. */
  input_tokens: number;
  /** `cached_tokens`: prompt tokens the prefix cache held. */
  input_tokens_details: { cached_tokens: number };
  /** Generated tokens. */
  output_tokens: number;
  /** Not counted apart yet: 0. */
  output_tokens_details: { reasoning_tokens: number };
  /** Input plus output. */
  total_tokens: number;
}

/** A `response` object. */
export interface ResponseObject {
  /** `resp_` and 32 hex digits; pass it as `previous_response_id` to continue. */
  id: string;
  /** Always `response`. */
  object: "response";
  /** Seconds since the epoch. */
  created_at: number;
  /** `incomplete` when `max_output_tokens` cut the output. */
  status: "in_progress" | "completed" | "incomplete";
  /** Always null: failures are HTTP errors or stream error events. */
  error: null;
  /** Why it is incomplete. */
  incomplete_details: { reason: "max_output_tokens" } | null;
  /** The request's instructions (not carried to later turns). */
  instructions: string | null;
  /** As requested. */
  max_output_tokens: number | null;
  /** The model that answered. */
  model: string;
  /** Reasoning, messages and function calls, in order. */
  output: ResponseOutputItem[];
  /** As requested (default true). */
  parallel_tool_calls: boolean;
  /** The response this one continues. */
  previous_response_id: string | null;
  /** As requested (no model here takes an effort or writes a summary). */
  reasoning: { effort: string | null; summary: string | null };
  /** Whether it was kept for later turns. */
  store: boolean;
  /** As requested. */
  temperature: number | null;
  /** The output format requested (`text` by default). */
  text: { format: { type: string } };
  /** As requested (`auto` by default). */
  tool_choice: string | { type: string; name?: string };
  /** As requested. */
  tools: { type: string }[];
  /** As requested. */
  top_p: number | null;
  /** As requested: alternatives per token in the log-probabilities. */
  top_logprobs: number | null;
  /** As requested (a cap on built-in tool calls, which this server never makes). */
  max_tool_calls: number | null;
  /** Always `disabled`: too long an input is an error. */
  truncation: "disabled";
  /** Token counts, once complete. */
  usage: ResponseUsage | null;
  /** As requested. */
  user: string | null;
  /** As requested. */
  metadata: Record<string, string>;
}

/** One stream event (`type` and `sequence_number`, plus the event's own fields). */
export interface ResponseEvent {
  /** The event type, e.g. `response.output_text.delta`. */
  type: string;
  /** Counts up from 0 within a stream. */
  sequence_number: number;
  /** The event's own fields. */
  [field: string]: unknown;
}
