import { ValidationError } from "../../../src/core/errors.ts";
import { findHeadEnd, parseRequestHead, requestUrl } from "../../../src/http/http1/request_head.ts";
import { assertEquals, assertThrows } from "../../_assert.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

function rejects(head: string, code: string, status = 400): void {
  const err = assertThrows(() => parseRequestHead(bytes(head)), ValidationError);
  assertEquals([err.code, err.status], [code, status], head);
}

Deno.test("findHeadEnd() finds the blank line after CRLF or bare LF lines, and -1 before it", () => {
  const crlf = bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY");
  assertEquals(findHeadEnd(crlf, 0, crlf.length), crlf.length - 4);
  const lf = bytes("GET / HTTP/1.1\nHost: x\n\nBODY");
  assertEquals(findHeadEnd(lf, 0, lf.length), lf.length - 4);
  const partial = bytes("GET / HTTP/1.1\r\nHost: x\r\n\r");
  assertEquals(findHeadEnd(partial, 0, partial.length), -1);
  assertEquals(findHeadEnd(crlf, 0, 10), -1, "only looks below `to`");
});

Deno.test("parseRequestHead() reads the request line, headers and framing", () => {
  const head = parseRequestHead(
    bytes(
      "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a:1\r\nContent-Length: 5, 5\r\n" +
        "X-Many: 1\r\nX-Many: 2\r\nExpect: 100-Continue\r\nX-Empty:\r\n\r\n",
    ),
  );
  assertEquals(head.method, "POST");
  assertEquals(head.target, "/v1/chat/completions?x=1");
  assertEquals(head.minor, 1);
  assertEquals(head.contentLength, 5);
  assertEquals(head.chunked, false);
  assertEquals(head.keepAlive, true);
  assertEquals(head.expectContinue, true);
  const headers = new Headers(head.headers);
  assertEquals(head.host, "a:1");
  assertEquals(headers.get("x-many"), "1, 2");
  assertEquals(headers.get("x-empty"), "");
});

Deno.test("parseRequestHead() keeps HTTP/1.0 alive only when asked, and 1.1 unless told to close", () => {
  assertEquals(parseRequestHead(bytes("GET / HTTP/1.0\r\n\r\n")).keepAlive, false);
  assertEquals(
    parseRequestHead(bytes("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")).keepAlive,
    true,
  );
  assertEquals(
    parseRequestHead(bytes("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).keepAlive,
    false,
  );
  assertEquals(parseRequestHead(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n")).chunked, false);
});

Deno.test("parseRequestHead() keeps header bytes 0x80-0xff as they are", () => {
  const raw = new Uint8Array([
    ...bytes("GET / HTTP/1.1\r\nHost: x\r\nX-B: "),
    0x80,
    0xe9,
    0xff,
    13,
    10,
    13,
    10,
  ]);
  const value = new Headers(parseRequestHead(raw).headers).get("x-b")!;
  assertEquals([...value].map((c) => c.charCodeAt(0)), [0x80, 0xe9, 0xff]);
});

Deno.test("parseRequestHead() refuses malformed heads with the matching status and code", () => {
  rejects("GARBAGE\r\n\r\n", "invalid_request_line");
  rejects("GET /\r\n\r\n", "invalid_request_line");
  rejects("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", "invalid_request_line");
  rejects("PRI * HTTP/2.0\r\n\r\n", "http_version_not_supported", 505);
  rejects("GET / HTTP/3.0\r\nHost: x\r\n\r\n", "http_version_not_supported", 505);
  rejects("GET / HTTP/1.1\r\n\r\n", "missing_host");
  rejects("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", "invalid_header");
  rejects("GET / HTTP/1.1\r\nHost : x\r\n\r\n", "invalid_header");
  rejects("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", "invalid_header");
  rejects("GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n", "invalid_header");
  rejects("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\n", "invalid_content_length");
  rejects("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", "invalid_content_length");
  rejects(
    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
    "conflicting_framing",
  );
  rejects(
    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
    "invalid_transfer_encoding",
  );
  rejects(
    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    "unsupported_transfer_encoding",
    501,
  );
});

Deno.test("requestUrl() builds the URL from Host, and refuses targets that are not paths", () => {
  assertEquals(requestUrl("/a?b=1", "h:8", "127.0.0.1:1"), "http://h:8/a?b=1");
  assertEquals(requestUrl("/a", null, "127.0.0.1:1"), "http://127.0.0.1:1/a");
  assertEquals(requestUrl("http://o/p", "h", "f"), "http://o/p");
  assertEquals(requestUrl("*", "h", "f"), "http://h/");
  for (const [target, host] of [["a/b", "h"], ["/a", "bad host"]]) {
    const err = assertThrows(() => requestUrl(target, host, "f"), ValidationError);
    assertEquals(err.code, "invalid_request_target");
  }
});
