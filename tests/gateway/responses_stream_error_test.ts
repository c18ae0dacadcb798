// A Responses stream that fails after it started (here: the backend's chat stream breaks
// mid-way) ends with OpenAI's `error` event (`event: error`, `type`, `sequence_number`, `code`,
// `message`, `param`), which the `openai` SDK and the AI SDK's own provider both read as the
// server's error. The chat API's `data: {"error": …}` event was sent before: the AI SDK failed to
// validate it and reported a schema mismatch instead of the error.
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { readSseData } from "../../src/protocol/sse.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

// The raw stream as (event name, data) pairs.
async function sseFrames(res: Response): Promise<{ event: string | null; data: string }[]> {
  const text = await res.text();
  return text.split("\n\n").filter((f) => f.trim() !== "").map((frame) => {
    const lines = frame.split("\n");
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? null;
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return { event, data };
  });
}

Deno.test("responses: a stream that fails mid-way ends with OpenAI's error event, read by the openai SDK and the AI SDK", async (t) => {
  const broken = new FakeEngine("broken", { chunks: 5, breakAfter: 2 });
  const gw = await startGateway({
    logger: QUIET,
    backends: [{ id: "broken", baseUrl: broken.serve(), kind: "llm", models: ["m"] }],
  });
  try {
    await t.step("raw stream: the last event is `error`, numbered after the others", async () => {
      const res = await fetch(`${gw.baseUrl}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "hi", stream: true }),
      });
      assertEquals(res.status, 200);
      const frames = await sseFrames(res);
      const events = frames.map((f) => JSON.parse(f.data));
      assertEquals(frames.map((f) => f.event), events.map((e) => e.type));
      assertEquals(events.map((e) => e.sequence_number), events.map((_, i) => i));
      const last = events.at(-1);
      assertEquals(last.type, "error");
      assertEquals(last.code, "stream_broken");
      assertMatch(last.message, /broke mid-way/);
      assertEquals(last.param, null);
      // The error object too, for readers of `data.error`.
      assertEquals(last.error.code, "stream_broken");
      assertEquals(last.error.message, last.message);
      assert(events.some((e) => e.type === "response.output_text.delta"));
      assert(!events.some((e) => e.type === "response.completed"));
      // Not stored: it never completed.
      const id = events[0].response.id;
      assertEquals(
        await fetch(`${gw.baseUrl}/responses/${id}`).then(async (r) => {
          await r.body?.cancel();
          return r.status;
        }),
        404,
      );
    });

    await t.step(
      "openai SDK: the stream throws an APIError with the server's message",
      async () => {
        const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: "unused", maxRetries: 0 });
        const seen: string[] = [];
        let error: unknown;
        try {
          const stream = await client.responses.create({ model: "m", input: "hi", stream: true });
          for await (const event of stream) seen.push(event.type);
        } catch (err) {
          error = err;
        }
        assert(error instanceof OpenAI.APIError, String(error));
        assertMatch(error.message, /broke mid-way/);
        assertEquals(error.code, "stream_broken");
        assert(seen.includes("response.output_text.delta"));
      },
    );

    await t.step(
      "AI SDK: streamText reports the server's error, not a schema mismatch",
      async () => {
        const provider = createOpenAI({ baseURL: gw.baseUrl, apiKey: "unused" });
        const errors: string[] = [];
        let finishReason: string | undefined;
        let text = "";
        const result = streamText({
          model: provider("m"),
          prompt: "hi",
          maxRetries: 0,
          onError: () => {}, // read below, from the stream
        });
        for await (const part of result.fullStream) {
          if (part.type === "text-delta") text += part.text;
          if (part.type === "error") errors.push((part.error as Error).message);
          if (part.type === "finish") finishReason = part.finishReason;
        }
        assertEquals(errors.length, 1, errors.join(" | "));
        assertMatch(errors[0], /broke mid-way/);
        assert(!/validation/i.test(errors[0]), errors[0]);
        assertEquals(finishReason, "error");
        assertEquals(text, "broken-0broken-1");
      },
    );
  } finally {
    await gw.stop();
    await broken.close();
  }
});

Deno.test('chat completions: an error after the stream started is still `data: {"error": …}` with no event name', async () => {
  const broken = new FakeEngine("broken", { chunks: 5, breakAfter: 2 });
  const gw = await startGateway({
    logger: QUIET,
    backends: [{ id: "broken", baseUrl: broken.serve(), kind: "llm", models: ["m"] }],
  });
  try {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    });
    const frames = await sseFrames(res.clone());
    assert(frames.every((f) => f.event === null));
    const data: string[] = [];
    for await (const d of readSseData(res.body!)) data.push(d);
    assertEquals(JSON.parse(data.at(-1)!).error.code, "stream_broken");
  } finally {
    await gw.stop();
    await broken.close();
  }
});
