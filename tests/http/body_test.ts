import {
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from "../../src/core/errors.ts";
import { readJsonBody } from "../../src/http/body.ts";
import { assertEquals, assertRejects } from "../_assert.ts";

const req = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request("http://x/", { method: "POST", body, headers });

Deno.test("readJsonBody() parses JSON split over chunks, with multi-byte characters", async () => {
  const bytes = new TextEncoder().encode(JSON.stringify({ text: "héllo 🌍" }));
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 3) c.enqueue(bytes.slice(i, i + 3));
      c.close();
    },
  });
  assertEquals(await readJsonBody(req(body), { maxBytes: 100 }), { text: "héllo 🌍" });
});

Deno.test("readJsonBody() refuses by Content-Length before reading", async () => {
  let pulled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled = true;
      c.close();
    },
  }, { highWaterMark: 0 }); // no pull until someone reads
  await assertRejects(
    () => readJsonBody(req(body, { "content-length": "101" }), { maxBytes: 100 }),
    PayloadTooLargeError,
    "100 bytes",
  );
  assertEquals(pulled, false);
  await body.cancel();
});

Deno.test("readJsonBody() accepts exactly the limit and refuses one byte more", async () => {
  const exact = JSON.stringify({ a: "x".repeat(92) });
  assertEquals(exact.length, 100);
  assertEquals(await readJsonBody(req(exact), { maxBytes: 100 }), { a: "x".repeat(92) });
  await assertRejects(
    () => readJsonBody(req(exact + " "), { maxBytes: 100 }),
    PayloadTooLargeError,
  );
});

Deno.test("readJsonBody() gives clear 400s for empty, non-UTF-8 and non-JSON bodies", async () => {
  const empty = await assertRejects(
    () => readJsonBody(req(null), { maxBytes: 10 }),
    ValidationError,
  );
  assertEquals(empty.code, "invalid_json");
  const latin1 = await assertRejects(
    () => readJsonBody(req(new Uint8Array([0x22, 0xe9, 0x22])), { maxBytes: 10 }),
    ValidationError,
    "not valid UTF-8",
  );
  assertEquals(latin1.code, "invalid_encoding");
  await assertRejects(
    () => readJsonBody(req("{'a':1}"), { maxBytes: 10 }),
    ValidationError,
    "JSON",
  );
});

Deno.test("readJsonBody() refuses a compressed body with a 415 naming its encoding", async () => {
  const gzipped = await new Response(
    new Blob(['{"a":1}']).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
  const err = await assertRejects(
    () => readJsonBody(req(gzipped, { "content-encoding": "gzip" }), { maxBytes: 1000 }),
    UnsupportedMediaTypeError,
    "encoded as 'gzip'",
  );
  assertEquals([err.status, err.code], [415, "unsupported_content_encoding"]);
  const plain = req('{"a":1}', { "content-encoding": "identity" });
  assertEquals(await readJsonBody(plain, { maxBytes: 1000 }), { a: 1 });
});
