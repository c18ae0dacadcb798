import { bytesResponse, knownBody } from "../../../src/http/http1/known_body.ts";
import { writeResponse } from "../../../src/http/http1/response_writer.ts";
import { assert, assertEquals, assertMatch } from "../../_assert.ts";

const encode = (text: string) => new TextEncoder().encode(text);

Deno.test("bytesResponse() is an ordinary Response whose bytes knownBody() gives back", async () => {
  const bytes = encode('{"a":1}');
  const res = bytesResponse(bytes, {
    status: 201,
    headers: [["content-type", "application/json"]],
  });
  assertEquals(res.status, 201);
  assertEquals(res.headers.get("content-type"), "application/json");
  assertEquals(knownBody(res), bytes);
  // Its body still reads as usual; once read, the bytes are no longer offered.
  assertEquals(await res.json(), { a: 1 });
  assertEquals(knownBody(res), undefined);
});

Deno.test("knownBody() knows nothing of other responses, nor of copies", () => {
  assertEquals(knownBody(new Response("hi")), undefined);
  assertEquals(knownBody(Response.json({})), undefined);
  const res = bytesResponse(encode("x"));
  assertEquals(knownBody(new Response(res.body, res)), undefined);
});

Deno.test("writeResponse() sends known bytes in one write and leaves the body stream unread", async () => {
  const writes: string[] = [];
  const sink = {
    write: (b: Uint8Array) => Promise.resolve(void writes.push(new TextDecoder().decode(b))),
  };
  const res = bytesResponse(encode('{"ok":true}'), {
    headers: [["content-type", "application/json"], ["x-extra", "1"]],
  });
  res.headers.set("x-request-id", "r1"); // headers set after it was made are sent too
  assertEquals(await writeResponse(sink, res), { reusable: true });
  assertEquals(writes.length, 1);
  assertMatch(writes[0], /^HTTP\/1\.1 200 OK\r\n/);
  assertMatch(writes[0], /\r\nx-request-id: r1\r\n/);
  assertMatch(writes[0], /\r\nx-extra: 1\r\n/);
  assert(writes[0].endsWith('content-length: 11\r\n\r\n{"ok":true}'), writes[0]);
  assertEquals(res.bodyUsed, false);
});

Deno.test("writeResponse() of known bytes: HEAD sends no body, close is honoured", async () => {
  const writes: string[] = [];
  const sink = {
    write: (b: Uint8Array) => Promise.resolve(void writes.push(new TextDecoder().decode(b))),
  };
  assertEquals(await writeResponse(sink, bytesResponse(encode("abc")), { head: true }), {
    reusable: true,
  });
  assert(writes[0].endsWith("\r\n\r\n"), writes[0]);
  assertEquals(await writeResponse(sink, bytesResponse(encode("abc")), { close: true }), {
    reusable: false,
  });
  assert(writes[1].endsWith("connection: close\r\n\r\nabc"), writes[1]);
});

Deno.test("writeResponse() reads the stream of a known-bytes response whose body was read", async () => {
  const writes: string[] = [];
  const sink = {
    write: (b: Uint8Array) => Promise.resolve(void writes.push(new TextDecoder().decode(b))),
  };
  const res = bytesResponse(encode("abcdef"));
  const reader = res.body!.getReader();
  await reader.read(); // the whole body, taken by someone else
  reader.releaseLock();
  assertEquals(await writeResponse(sink, res), { reusable: true });
  assert(writes[0].endsWith("content-length: 0\r\n\r\n"), writes[0]);
});
