import { type AnswerObserver, tapAnswer } from "../../src/gateway/answer_tap.ts";
import { bytesResponse, knownBody } from "../../src/http/http1/known_body.ts";
import { assert, assertEquals } from "../_assert.ts";
import { turnsDuring } from "../_helpers/event_loop_turns.ts";

function watcher(): AnswerObserver & { events: unknown[]; ended: number } {
  const w = {
    events: [] as unknown[],
    ended: 0,
    event: (body: unknown) => void w.events.push(body),
    end: () => void w.ended++,
  };
  return w;
}

Deno.test("tapAnswer() parses a JSON answer once and passes on the very same bytes", async () => {
  const w = watcher();
  // Not valid UTF-8 after the JSON: passed on as sent, not re-encoded.
  const bytes = new Uint8Array([...new TextEncoder().encode('{"a":1}'), 0x20, 0xff]);
  const res = await tapAnswer(
    new Response(bytes, { status: 201, headers: { "content-type": "application/json" } }),
    [w],
  );
  assertEquals(w.events, [undefined]); // not JSON as a whole
  assertEquals(w.ended, 1);
  assertEquals(res.status, 201);
  assertEquals(knownBody(res), bytes);
  assertEquals(new Uint8Array(await res.arrayBuffer()), bytes);
});

Deno.test("tapAnswer() reads known bytes without the body stream and returns the same Response", async () => {
  const w = watcher();
  const res = bytesResponse(new TextEncoder().encode('{"usage":{"completion_tokens":2}}'), {
    headers: { "content-type": "application/json" },
  });
  assert(await tapAnswer(res, [w]) === res);
  assertEquals(w.events, [{ usage: { completion_tokens: 2 } }]);
  assertEquals(w.ended, 1);
  assertEquals(res.bodyUsed, false);
  assertEquals(await res.json(), { usage: { completion_tokens: 2 } });
});

Deno.test("tapAnswer() leaves bodies it does not watch alone", async () => {
  const w = watcher();
  const res = new Response("hello", { headers: { "content-type": "text/plain" } });
  assert(await tapAnswer(res, [w]) === res);
  assertEquals(w.events, []);
  assertEquals(w.ended, 1);
  const empty = new Response(null, { status: 204 });
  assert(await tapAnswer(empty, [w]) === empty);
  assertEquals(w.ended, 2);
});

Deno.test("tapAnswer() with hideUsage shows a stream's usage to observers, not to the client", async () => {
  const w = watcher();
  const events = [
    { choices: [{ index: 0, delta: { content: "a" } }], usage: null },
    { choices: [{ index: 0, delta: { content: "b" } }], usage: null },
    { choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 } },
  ];
  const sse = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
  // Cut mid-line, as a socket may deliver it.
  const bytes = new TextEncoder().encode(sse);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
      controller.close();
    },
  });
  const res = await tapAnswer(
    new Response(body, { headers: { "content-type": "text/event-stream" } }),
    [w],
    { hideUsage: true },
  );
  assertEquals(
    await res.text(),
    'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n\n' +
      "data: [DONE]\n\n",
  );
  assertEquals(w.events, [...events, undefined]);
  assertEquals(w.ended, 1);
});

Deno.test("tapAnswer() shows observers a JSON answer's top-level usage, as JSON.parse reads it", async () => {
  const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };
  const bodies = [
    { id: "a", choices: [{ text: "x" }], usage },
    { usage, choices: [{ text: 'he said "usage": {} \\', usage: { prompt_tokens: 99 } }] },
    { choices: [{ usage: { prompt_tokens: 99 } }], "usage\\": 1, usage: null },
    { a: ["}", "{", "\\\\", '\\"', ",", "[", "]"], usage, b: { c: [{ usage: 1 }] } },
    { data: [], model: "m" },
    {},
  ];
  for (const body of bodies) {
    for (const text of [JSON.stringify(body), JSON.stringify(body, null, 2)]) {
      const w = watcher();
      await tapAnswer(
        new Response(text, { headers: { "content-type": "application/json" } }),
        [w],
      );
      const expected = JSON.parse(text).usage;
      assertEquals(w.events, [expected === undefined ? undefined : { usage: expected }], text);
    }
  }
  for (const text of ["[1, 2]", '"usage"', '{"usage": {"a":', "", '{"usage":1}}']) {
    const w = watcher();
    await tapAnswer(new Response(text, { headers: { "content-type": "application/json" } }), [w]);
    assertEquals(w.events, [undefined], text);
  }
});

Deno.test("tapAnswer(): other work runs while a big answer is read for its usage", async () => {
  // Usage first, then 16 MB of choices: the worst case, every byte read.
  const choices = Array.from(
    { length: 200_000 },
    (_, i) => ({ text: `choice ${i} "q" \\ `.repeat(5) }),
  );
  const text = JSON.stringify({ usage: { completion_tokens: 7 }, choices });
  assert(text.length > 16_000_000, `${text.length}`);
  const w = watcher();
  const answer = new Response(text, { headers: { "content-type": "application/json" } });
  const turns = await turnsDuring(() => tapAnswer(answer, [w]));
  assert(turns >= 8, `${turns} turns`);
  assertEquals((w.events as { usage: unknown }[]).map((e) => e.usage), [{ completion_tokens: 7 }]);
});
