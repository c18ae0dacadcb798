import { CancelledError } from "../../../src/core/errors.ts";
import { writeResponse } from "../../../src/server/http1/response_writer.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../../_assert.ts";

// A sink that records each write as text.
function recorder(): { writes: string[]; write(bytes: Uint8Array): Promise<void> } {
  const writes: string[] = [];
  const decoder = new TextDecoder();
  return { writes, write: (bytes) => Promise.resolve(void writes.push(decoder.decode(bytes))) };
}

Deno.test("writeResponse() sends a body at hand with Content-Length, head and body in one write", async () => {
  const sink = recorder();
  const outcome = await writeResponse(sink, Response.json({ a: 1 }, { status: 201 }));
  assertEquals(outcome, { reusable: true });
  assertEquals(sink.writes.length, 1);
  assertMatch(sink.writes[0], /^HTTP\/1\.1 201 Created\r\n/);
  assertMatch(sink.writes[0], /\r\ncontent-type: application\/json\r\n/);
  assertMatch(sink.writes[0], /\r\ndate: .+ GMT\r\n/);
  assert(sink.writes[0].endsWith('content-length: 7\r\n\r\n{"a":1}'), sink.writes[0]);
});

Deno.test("writeResponse() streams event streams chunked, one write per event, and ends them", async () => {
  const sink = recorder();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(new TextEncoder().encode("data: 1\n\n"));
      await gate;
      c.enqueue(new Uint8Array(0)); // an empty piece must not end the body
      c.enqueue(new TextEncoder().encode("data: 2\n\n"));
      c.close();
    },
  });
  const writing = writeResponse(
    sink,
    new Response(body, { headers: { "content-type": "text/event-stream" } }),
  );
  while (sink.writes.length < 2) await new Promise((r) => setTimeout(r, 1));
  // The head and the first event left before the second was produced.
  assertMatch(sink.writes[0], /\r\ntransfer-encoding: chunked\r\n\r\n$/);
  assertEquals(sink.writes[1], "9\r\ndata: 1\n\n\r\n");
  release();
  assertEquals(await writing, { reusable: true });
  assertEquals(sink.writes.slice(2), ["9\r\ndata: 2\n\n\r\n", "0\r\n\r\n"]);
});

Deno.test("writeResponse() gives HTTP/1.0 an unframed stream and closes; HEAD and 204 get no body", async () => {
  const old = recorder();
  const stream = new ReadableStream({ pull: (c) => c.close() });
  const res = new Response(stream, { headers: { "content-type": "text/event-stream" } });
  assertEquals(await writeResponse(old, res, { http10: true }), { reusable: false });
  assertMatch(old.writes[0], /\r\nconnection: close\r\n\r\n$/);
  assert(!old.writes.join("").includes("transfer-encoding"));

  const head = recorder();
  await writeResponse(head, new Response("hello", { headers: { "content-length": "5" } }), {
    head: true,
  });
  assertEquals(head.writes.length, 1);
  assert(head.writes[0].endsWith("content-length: 5\r\n\r\n"), head.writes[0]);

  const empty = recorder();
  await writeResponse(empty, new Response(null, { status: 204 }), { close: true });
  assert(!/content-length/i.test(empty.writes[0]), empty.writes[0]);
  assertMatch(empty.writes[0], /^HTTP\/1\.1 204 No Content\r\n/);
  assertMatch(empty.writes[0], /\r\nconnection: close\r\n\r\n$/);
});

Deno.test("writeResponse() replaces framing headers the handler set with its own", async () => {
  const sink = recorder();
  const res = new Response("abc", {
    headers: { "transfer-encoding": "chunked", "content-length": "99", "keep-alive": "x" },
  });
  await writeResponse(sink, res);
  assertEquals(sink.writes[0].match(/content-length: \d+/g), ["content-length: 3"]);
  assert(!/transfer-encoding|keep-alive/.test(sink.writes[0]));
});

Deno.test("writeResponse() cancels the body with the sink's error when the client is gone", async () => {
  let cancelled: unknown;
  const body = new ReadableStream<Uint8Array>({
    pull: (c) => c.enqueue(new Uint8Array(10)),
    cancel: (reason) => void (cancelled = reason),
  }, { highWaterMark: 0 });
  const gone = new CancelledError("gone");
  await assertRejects(
    () =>
      writeResponse(
        { write: () => Promise.reject(gone) },
        new Response(body, {
          headers: { "content-type": "text/event-stream" },
        }),
      ),
    CancelledError,
  );
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(cancelled, gone);
});

Deno.test("writeResponse() reports a body that fails after the head, so the connection closes", async () => {
  const sink = recorder();
  let n = 0;
  const body = new ReadableStream<Uint8Array>({
    pull: (c) => (n++ === 0 ? c.enqueue(new Uint8Array(1)) : c.error(new Error("broke"))),
  }, { highWaterMark: 0 });
  const outcome = await writeResponse(
    sink,
    new Response(body, { headers: { "content-type": "text/event-stream" } }),
  );
  assertEquals(outcome.reusable, false);
  assertEquals((outcome.bodyError as Error).message, "broke");
  assert(!sink.writes.join("").endsWith("0\r\n\r\n"), "no last chunk after a failure");
});
