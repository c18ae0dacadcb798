/**
 * Reads an answer's `usage` as it passes to the client, for per-key usage records and token
 * limits: a JSON answer by its `usage` field (a rerank answer's `total_tokens` counts as prompt
 * tokens), a stream by the usage chunk (which the gateway asks the backend for when the client
 * did not, see gateway_routes.ts); a stream that still has none (a backend that ignores
 * `stream_options`) counts its chunks with text as completion tokens (about one each, as the
 * dashboard's meter does). The callback runs once per answer, after the body has been passed on
 * (or the client went away).
 *
 * @module
 */
import type { AnswerUsage } from "./api_keys.ts";
import { hasText } from "./token_meter.ts";
import { type AnswerObserver, tapAnswer } from "./answer_tap.ts";

/**
 * Returns `res` unchanged for the client, calling `done` with its usage once it is known.
 *
 * @example
 * ```ts
 * import { tapUsage } from "./usage_tap.ts";
 * const res = await tapUsage(
 *   Response.json({ usage: { prompt_tokens: 3, completion_tokens: 5 } }),
 *   (u) => console.log(u), // { promptTokens: 3, completionTokens: 5 }
 * );
 * ```
 */
export function tapUsage(res: Response, done: (usage: AnswerUsage) => void): Promise<Response> {
  return tapAnswer(res, [usageObserver(done)]);
}

/** The observer of {@link tapUsage}, for a tap shared with other observers. */
export function usageObserver(done: (usage: AnswerUsage) => void): AnswerObserver {
  let found: AnswerUsage | undefined;
  let streamed = 0;
  return {
    event(body, inStream) {
      const usage = usageOf(body);
      if (usage !== undefined) found = usage;
      else if (inStream && hasText(body)) streamed++;
    },
    end() {
      done(found ?? { promptTokens: 0, completionTokens: streamed });
    },
  };
}

function usageOf(body: unknown): AnswerUsage | undefined {
  const usage = (body as { usage?: Record<string, unknown> } | undefined)?.usage;
  if (typeof usage !== "object" || usage === null) return undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  // A rerank answer has only total_tokens (the query and documents it read).
  const prompt = usage.prompt_tokens ?? (usage.completion_tokens == null ? usage.total_tokens : 0);
  return { promptTokens: n(prompt), completionTokens: n(usage.completion_tokens) };
}
