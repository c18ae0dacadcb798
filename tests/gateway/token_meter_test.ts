// The gateway's token meter: windowed rates with a fake clock, and answers metered as they pass.
import { assertEquals } from "../_assert.ts";
import { meterTokens, RATE_WINDOW_SECONDS, TokenMeter } from "../../src/gateway/token_meter.ts";

Deno.test("TokenMeter counts totals and a rate over the last window only", () => {
  let now = 1_000_000;
  const meter = new TokenMeter({ now: () => now });
  assertEquals(meter.rate("a"), { total: 0, perSecond: 0 });
  meter.record("a", 30);
  now += 1000;
  meter.record("a", 20);
  meter.record("b", 5);
  assertEquals(meter.rate("a"), { total: 50, perSecond: 50 / RATE_WINDOW_SECONDS });
  assertEquals(meter.rate("b").total, 5);
  now += (RATE_WINDOW_SECONDS - 1) * 1000; // the first second has left the window
  assertEquals(meter.rate("a"), { total: 50, perSecond: 20 / RATE_WINDOW_SECONDS });
  now += 1000;
  assertEquals(meter.rate("a"), { total: 50, perSecond: 0 });
});

Deno.test("meterTokens() reads a JSON answer's usage and returns the same body", async () => {
  const meter = new TokenMeter();
  const body = { object: "chat.completion", usage: { prompt_tokens: 3, completion_tokens: 7 } };
  const res = await meterTokens(Response.json(body, { status: 200 }), "a", meter);
  assertEquals(await res.json(), body);
  assertEquals(res.headers.get("content-type"), "application/json");
  assertEquals(meter.rate("a").total, 7);
});

function sse(events: string[], split: number): Response {
  const text = events.map((e) => `data: ${e}\n\n`).join("");
  const bytes = new TextEncoder().encode(text);
  // Cut at arbitrary places: lines cross chunk boundaries.
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += split) chunks.push(bytes.subarray(i, i + split));
  return new Response(ReadableStream.from(chunks), {
    headers: { "content-type": "text/event-stream" },
  });
}

const chunk = (content: string) => JSON.stringify({ choices: [{ delta: { content } }] });

Deno.test("meterTokens() counts a stream's text chunks as they pass and keeps the bytes", async () => {
  const meter = new TokenMeter();
  const events = [chunk(""), chunk("Hel"), chunk("lo"), chunk("!"), "[DONE]"];
  const res = await meterTokens(sse(events, 7), "a", meter);
  const reader = res.body!.getReader();
  const first = await reader.read();
  assertEquals(meter.rate("a").total < 3, true, "counted while streaming, not before");
  let text = new TextDecoder().decode(first.value);
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += new TextDecoder().decode(r.value);
  }
  assertEquals(text, events.map((e) => `data: ${e}\n\n`).join(""));
  assertEquals(meter.rate("a").total, 3);
});

Deno.test("meterTokens() corrects a stream's estimate by its final usage chunk", async () => {
  const meter = new TokenMeter();
  const usage = JSON.stringify({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 5 } });
  const res = await meterTokens(sse([chunk("a"), chunk("b"), usage, "[DONE]"], 1000), "a", meter);
  await res.text();
  assertEquals(meter.rate("a").total, 5);
});

Deno.test("meterTokens() passes a cancel on to the upstream stream", async () => {
  let cancelled: unknown = null;
  const upstream = new ReadableStream<Uint8Array>({
    pull: (c) => c.enqueue(new TextEncoder().encode(`data: ${chunk("x")}\n\n`)),
    cancel: (reason) => void (cancelled = reason),
  });
  const res = await meterTokens(
    new Response(upstream, { headers: { "content-type": "text/event-stream" } }),
    "a",
    new TokenMeter(),
  );
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel("client left");
  assertEquals(cancelled, "client left");
});

Deno.test("meterTokens() sums each backend's prompt tokens and those its prefix cache served", async () => {
  const meter = new TokenMeter();
  assertEquals(meter.prompts("a"), { prompt: 0, cached: 0 });
  const usage = (cached?: number) => ({
    prompt_tokens: 100,
    completion_tokens: 1,
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
  });
  await (await meterTokens(Response.json({ usage: usage(64) }), "a", meter)).text();
  await (await meterTokens(Response.json({ usage: usage() }), "a", meter)).text();
  const final = JSON.stringify({ choices: [], usage: usage(96) });
  await (await meterTokens(sse([chunk("x"), final, "[DONE]"], 5), "a", meter)).text();
  assertEquals(meter.prompts("a"), { prompt: 300, cached: 160 });
  assertEquals(meter.prompts("b"), { prompt: 0, cached: 0 });
});

Deno.test("meterTokens() counts a stream's prompt once when every chunk carries usage (vLLM's continuous_usage_stats)", async () => {
  const meter = new TokenMeter();
  const so_far = (n: number, content?: string) =>
    JSON.stringify({
      choices: content === undefined ? [] : [{ delta: { content } }],
      usage: {
        prompt_tokens: 100,
        completion_tokens: n,
        prompt_tokens_details: { cached_tokens: 40 },
      },
    });
  const events = [so_far(1, "a"), so_far(2, "b"), so_far(3, "c"), so_far(3), "[DONE]"];
  await (await meterTokens(sse(events, 9), "a", meter)).text();
  assertEquals(meter.prompts("a"), { prompt: 100, cached: 40 });
  assertEquals(meter.rate("a").total, 3);
});

Deno.test("meterTokens() counts the prompt of a stream whose upstream fails after its usage", async () => {
  const meter = new TokenMeter();
  const usage = JSON.stringify({ choices: [], usage: { prompt_tokens: 8, completion_tokens: 2 } });
  let sent = false;
  const upstream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent) return c.error(new Error("connection reset"));
      sent = true;
      c.enqueue(new TextEncoder().encode(`data: ${chunk("x")}\n\ndata: ${usage}\n\n`));
    },
  });
  const res = await meterTokens(
    new Response(upstream, { headers: { "content-type": "text/event-stream" } }),
    "a",
    meter,
  );
  await res.text().catch(() => {});
  assertEquals(meter.prompts("a").prompt, 8);
});
