import { type AnswerObserver, tapAnswer } from "../../src/gateway/answer_tap.ts";
import { bytesResponse, knownBody } from "../../src/http/http1/known_body.ts";
import { assert, assertEquals } from "../_assert.ts";

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
