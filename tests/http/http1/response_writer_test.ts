import { CancelledError } from "../../../src/core/errors.ts";
import { writeResponse } from "../../../src/http/http1/response_writer.ts";
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

Deno.test("writeResponse() streams event streams chunked, each event as soon as it exists", async () => {
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
  while (!sink.writes.join("").includes("data: 1")) await new Promise((r) => setTimeout(r, 1));
  // The head and the first event left before the second was produced.
  const sent = sink.writes.join("");
  assertMatch(sent, /\r\ntransfer-encoding: chunked\r\n\r\n9\r\ndata: 1\n\n\r\n$/);
  release();
  assertEquals(await writing, { reusable: true });
  assertEquals(sink.writes.join("").slice(sent.length), "9\r\ndata: 2\n\n\r\n0\r\n\r\n");
});

Deno.test("writeResponse() sends what a stream produced during a slow write in one write", async () => {
  const writes: number[] = [];
  let unblock!: () => void;
  const blocked = new Promise<void>((r) => (unblock = r));
  const sink = {
    write: async (bytes: Uint8Array) => {
      writes.push(bytes.byteLength);
      if (writes.length === 1) await blocked; // the first write hangs a while
    },
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(100));
      c.close();
    },
  });
  const writing = writeResponse(
    sink,
    new Response(body, { headers: { "content-type": "text/event-stream" } }),
  );
  await new Promise((r) => setTimeout(r, 10));
  unblock();
  await writing;
  // The head with the first chunk, then the four others and the last chunk together.
  assertEquals(writes.length, 2);
  assertEquals(writes[1], 4 * (2 + 2 + 100 + 2) + 5);
});

Deno.test("writeResponse() gives HTTP/1.0 an unframed stream and closes; HEAD and 204 get no body", async () => {
  const old = recorder();
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(c) {
      await new Promise((r) => setTimeout(r, 1)); // never at hand: a stream of unknown length
      if (pulls++ < 2) c.enqueue(new TextEncoder().encode("ab"));
      else c.close();
    },
  }, { highWaterMark: 0 });
  assertEquals(await writeResponse(old, new Response(stream), { http10: true }), {
    reusable: false,
  });
  assert(old.writes[0].endsWith("\r\nconnection: close\r\n\r\nab"), old.writes[0]);
  assertEquals(old.writes.join("").slice(-4), "abab", "no chunk framing");
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
