import { jsonResponse } from "../../src/http/json_response.ts";
import { knownBody } from "../../src/http/http1/known_body.ts";
import { writeResponse } from "../../src/http/http1/response_writer.ts";
import { LazyJsonArray } from "../../src/protocol/json_text.ts";
import { assert, assertEquals } from "../_assert.ts";
import { turnsDuring } from "../_helpers/event_loop_turns.ts";

// About 4 MB of JSON: many slices.
const big = () => ({
  data: Array.from({ length: 40_000 }, (_, i) => ({ index: i, text: `item ${i}`, v: [i, -i] })),
});

Deno.test("jsonResponse() of a small value has its bytes known, its status and headers kept", async () => {
  const res = jsonResponse({ ok: true }, { status: 201, headers: { "x-request-id": "r1" } });
  assertEquals(res.status, 201);
  assertEquals(res.headers.get("content-type"), "application/json");
  assertEquals(res.headers.get("x-request-id"), "r1");
  assertEquals(new TextDecoder().decode(knownBody(res)), '{"ok":true}');
  assertEquals(await res.json(), { ok: true });
});

Deno.test("jsonResponse() of a big value streams the text JSON.stringify writes", async () => {
  const value = big();
  const res = jsonResponse(value);
  assertEquals(knownBody(res), undefined);
  assertEquals(res.headers.get("content-type"), "application/json");
  assertEquals(await res.text(), JSON.stringify(value));
});

Deno.test("jsonResponse(): other work runs between the slices of a big answer, however fast the client", async () => {
  // A sink that takes every write at once, as a socket with room does: without a wait between
  // slices the whole answer would be written in one turn of the event loop.
  let bytes = 0;
  const sink = { write: (b: Uint8Array) => Promise.resolve(void (bytes += b.byteLength)) };
  const value = big();
  const turns = await turnsDuring(() => writeResponse(sink, jsonResponse(value)));
  const length = JSON.stringify(value).length;
  assert(bytes > length, `${bytes} bytes written`);
  // A slice is 1M characters: the others got a turn between most of them.
  assert(turns >= Math.floor(length / (1 << 20)) - 1, `${turns} turns for ${length} chars`);
});

Deno.test("jsonResponse() writes no further than the client reads", async () => {
  let made = 0;
  const list = new LazyJsonArray(400_000, (i) => {
    made++;
    return `entry number ${i}`;
  });
  const res = jsonResponse({ list });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.read();
  assert(made > 0 && made < 200_000, `${made} of 400000 items made after two reads`);
  await reader.cancel();
});
