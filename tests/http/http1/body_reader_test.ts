import { CancelledError, type SvcException, ValidationError } from "../../../src/core/errors.ts";
import { RequestBody } from "../../../src/http/http1/body_reader.ts";
import { SocketReader } from "../../../src/http/http1/socket_reader.ts";
import { assert, assertEquals, assertRejects } from "../../_assert.ts";

// A socket that yields `pieces` one read at a time, then the end of the stream.
function socket(...pieces: string[]): SocketReader {
  const queue = pieces.map((p) => new TextEncoder().encode(p));
  const conn = {
    read(buf: Uint8Array): Promise<number | null> {
      const next = queue.shift();
      if (next === undefined) return Promise.resolve(null);
      buf.set(next);
      return Promise.resolve(next.length);
    },
  };
  return new SocketReader(conn as unknown as Deno.Conn);
}

function body(reader: SocketReader, length: number | null) {
  const ends: (SvcException | undefined)[] = [];
  const b = new RequestBody(reader, {
    length,
    maxHeaderBytes: 64,
    onEnd: (e) => void ends.push(e),
  });
  return { b, ends, text: () => new Response(b.stream).text() };
}

Deno.test("RequestBody reads a Content-Length body split over reads and stops at its length", async () => {
  const reader = socket('{"a"', ":1}GET / HTTP/1.1\r\n");
  const { b, ends, text } = body(reader, 7);
  assertEquals(await text(), '{"a":1}');
  assert(b.complete);
  assertEquals(ends, [undefined]);
  assertEquals(reader.available, "GET / HTTP/1.1\r\n".length, "the next request stays buffered");
});

Deno.test("RequestBody decodes chunks split anywhere, with extensions and trailers", async () => {
  const { text } = body(socket("3;x=", "y\r\nabc\r", "\n2\r\nde\r\n0\r\nT: 1\r", "\n\r\n"), null);
  assertEquals(await text(), "abcde");
});

Deno.test("RequestBody fails with 400 on a chunk longer than its size or a bad size line", async () => {
  for (const wire of ["2\r\nabc\r\n0\r\n\r\n", "-1\r\n", `${"a".repeat(2000)}\r\n`]) {
    const { b, ends, text } = body(socket(wire), null);
    await assertRejects(text, ValidationError);
    assert(b.failed, wire);
    assertEquals(ends[0]?.status, 400, wire);
  }
});

Deno.test("RequestBody fails with CancelledError when the client leaves mid-body", async () => {
  const { ends, text } = body(socket("abc"), 10);
  await assertRejects(text, CancelledError);
  assert(ends[0] instanceof CancelledError);
});

Deno.test("RequestBody drains an unread body within the limit, not beyond it", async () => {
  const small = body(socket("0123456789"), 10);
  assert(small.b.drainable(16) && await small.b.drain(16));
  const big = body(socket("0123456789"), 10);
  assert(!big.b.drainable(4));
  assert(!(await big.b.drain(4)));
});
