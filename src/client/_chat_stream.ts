// Reads an OpenAI chat stream (SSE) into deltas; error events and broken streams become our
// typed errors, and leaving early (break, abort) cancels the body so the server stops at once.
import { ServiceError, SvcException } from "../core/errors.ts";
import type { ChatCompletion, ChatCompletionChunk } from "../protocol/chat_response.ts";
import { readSseData } from "../protocol/sse.ts";
import { errorFromStreamEvent } from "../protocol/error_from_response.ts";
import type { OpenStream } from "./_http.ts";
import type { ChatStreamDelta } from "./types.ts";

/** The deltas of an opened `/chat/completions` stream. */
export async function* readChatDeltas(
  open: OpenStream,
): AsyncGenerator<ChatStreamDelta, void, undefined> {
  const { response, url } = open;
  try {
    if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
      // A server that ignored `stream`: its whole answer becomes one delta per choice.
      const whole = await response.json() as ChatCompletion;
      for (const c of whole.choices ?? []) {
        yield {
          content: c.message?.content ?? "",
          index: c.index ?? 0,
          finishReason: c.finish_reason ?? null,
          chunk: { ...whole, object: "chat.completion.chunk", choices: [] },
        };
      }
      return;
    }
    for await (const data of readSseData(response.body!)) {
      if (data === "[DONE]") return;
      let event: ChatCompletionChunk & { error?: unknown };
      try {
        event = JSON.parse(data);
      } catch (err) {
        throw new ServiceError(`${url} sent an event that is not JSON: ${data.slice(0, 200)}`, {
          code: "bad_response",
          cause: err,
        });
      }
      if (event.error !== undefined) throw errorFromStreamEvent(event, url, { maxChars: 2000 });
      for (const c of event.choices ?? []) {
        const delta: ChatStreamDelta = {
          content: c.delta?.content ?? "",
          index: c.index ?? 0,
          finishReason: c.finish_reason ?? null,
          chunk: event,
        };
        if (c.delta?.tool_calls?.length) {
          delta.toolCalls = c.delta.tool_calls.map((t) => ({
            index: t.index,
            ...(t.id === undefined ? {} : { id: t.id }),
            ...(t.function?.name === undefined ? {} : { name: t.function.name }),
            arguments: t.function?.arguments ?? "",
          }));
        }
        yield delta;
      }
    }
  } catch (err) {
    if (err instanceof SvcException) throw err;
    throw open.bodyError(err);
  } finally {
    open.release();
    await response.body?.cancel().catch(() => {});
  }
}
