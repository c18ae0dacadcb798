/**
 * Reads an answer's `usage` as it passes to the client, for per-key usage records and token
 * limits: a JSON answer by its `usage` field, a stream by the usage chunk (sent when the client
 * asked for `stream_options.include_usage`); a stream without one counts its chunks with text as
 * completion tokens (about one each, as the dashboard's meter does), so leaving the usage chunk
 * out does not escape a key's tpm. The callback runs once per answer, after the body has been
 * passed on (or the client went away).
 *
 * @module
 */
import type { AnswerUsage } from "./api_keys.ts";
import { hasText } from "./token_meter.ts";

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
export async function tapUsage(
  res: Response,
  done: (usage: AnswerUsage) => void,
): Promise<Response> {
  const type = res.headers.get("content-type") ?? "";
  if (
    res.body === null ||
    (!type.startsWith("text/event-stream") && !type.startsWith("application/json"))
  ) {
    done(ZERO);
    return res;
  }
  if (type.startsWith("application/json")) {
    const text = await res.text();
    done(usageOf(parse(text)) ?? ZERO);
    return new Response(text, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  }
  const decoder = new TextDecoder();
  let pending = "";
  let found: AnswerUsage | undefined;
  let streamed = 0;
  let reported = false;
  const report = () => {
    if (reported) return;
    reported = true;
    done(found ?? { promptTokens: 0, completionTokens: streamed });
  };
  const scan = (line: string) => {
    if (!line.startsWith("data:")) return;
    const event = parse(line.slice(5).trim());
    const usage = usageOf(event);
    if (usage !== undefined) found = usage;
    else if (hasText(event)) streamed++;
  };
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(chunk);
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split("\n");
        pending = lines.pop()!;
        for (const line of lines) scan(line);
      },
      flush() {
        scan(pending);
        report();
      },
      cancel() {
        report();
      },
    }),
  );
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

const ZERO: AnswerUsage = { promptTokens: 0, completionTokens: 0 };

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function usageOf(body: unknown): AnswerUsage | undefined {
  const usage = (body as { usage?: Record<string, unknown> } | undefined)?.usage;
  if (typeof usage !== "object" || usage === null) return undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return { promptTokens: n(usage.prompt_tokens), completionTokens: n(usage.completion_tokens) };
}
