import { Http1Client } from "../../../src/http/http1/client.ts";
import { knownBody } from "../../../src/http/http1/known_body.ts";
import { MalformedResponseError } from "../../../src/http/http1/response_head.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../../_assert.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

// A TCP server whose every connection is handled by `script`; it records what each connection read.
function rawServer(script: (conn: Deno.Conn, index: number) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const handlers: Promise<void>[] = [];
  let connections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      const index = connections++;
      handlers.push(
        script(conn, index).catch(() => {}).finally(() => {
          try {
            conn.close();
          } catch {
            // Closed by the script.
          }
        }),
      );
    }
  })();
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    async close() {
      listener.close();
      await accepting;
      await Promise.all(handlers);
    },
  };
}

// Reads one request head (and a Content-Length body) off `conn`; null when the client closed.
async function readRequest(
  conn: Deno.Conn,
  buffered: { bytes: Uint8Array },
): Promise<{ head: string; body: string } | null> {
  while (true) {
    const text = dec.decode(buffered.bytes);
    const end = text.indexOf("\r\n\r\n");
    if (end !== -1) {
      const head = text.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      const total = end + 4 + length;
      if (buffered.bytes.length >= total) {
        const body = dec.decode(buffered.bytes.subarray(end + 4, total));
        buffered.bytes = buffered.bytes.slice(total);
        return { head, body };
      }
    }
    const chunk = new Uint8Array(4096);
    const n = await conn.read(chunk).catch(() => null);
    if (n === null) return null;
    const next = new Uint8Array(buffered.bytes.length + n);
    next.set(buffered.bytes);
    next.set(chunk.subarray(0, n), buffered.bytes.length);
    buffered.bytes = next;
  }
}

async function write(conn: Deno.Conn, text: string): Promise<void> {
  const bytes = enc.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
}

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${
    enc.encode(body).length
  }\r\n${extra}\r\n${body}`;

// Answers each request on a connection with its method, path, headers and body echoed back.
const echoServer = () =>
  rawServer(async (conn) => {
    const buffered = { bytes: new Uint8Array() };
    while (true) {
      const req = await readRequest(conn, buffered);
      if (req === null) return;
      await write(conn, ok(JSON.stringify(req)));
    }
  });

Deno.test("Http1Client sends method, path, headers and body, and reuses the kept-alive socket", async () => {
  const server = echoServer();
  const client = new Http1Client();
  try {
    for (let i = 0; i < 3; i++) {
      const res = await client.request(`${server.url}/v1/x?y=${i}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": `r${i}` },
        body: `{"n":${i},"s":"é"}`,
      });
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("content-type"), "application/json");
      assert(knownBody(res) !== undefined, "a short answer is in memory with its head");
      const echoed = await res.json();
      assertEquals(echoed.body, `{"n":${i},"s":"é"}`);
      assertMatch(echoed.head, new RegExp(`^POST /v1/x\\?y=${i} HTTP/1\\.1\\r\\n`));
      assertMatch(echoed.head, new RegExp(`host: ${new URL(server.url).host}`));
      assertMatch(echoed.head, new RegExp(`x-request-id: r${i}`));
      assertMatch(echoed.head, /content-length: 16/, "the length counts bytes, not characters");
    }
    assertEquals(server.connections, 1, "one socket carried all three");
    assertEquals(client.idleSockets, 1);
  } finally {
    client.close();
    await server.close();
  }
  assertEquals(client.idleSockets, 0);
});

Deno.test("Http1Client streams a chunked body at the reader's pace and reuses the socket after it", async () => {
  let sendSecond!: () => void;
  const second = new Promise<void>((r) => sendSecond = r);
  const server = rawServer(async (conn) => {
    const buffered = { bytes: new Uint8Array() };
    await readRequest(conn, buffered);
    await write(
      conn,
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
        "d\r\ndata: first\n\n\r\n",
    );
    await second;
    await write(conn, "e\r\ndata: second\n\n\r\n0\r\n\r\n");
    const req = await readRequest(conn, buffered);
    if (req !== null) await write(conn, ok("{}"));
  });
  const client = new Http1Client();
  try {
    const res = await client.request(`${server.url}/s`, { method: "GET" });
    const reader = res.body!.getReader();
    assertEquals(dec.decode((await reader.read()).value), "data: first\n\n");
    sendSecond();
    assertEquals(dec.decode((await reader.read()).value), "data: second\n\n");
    assert((await reader.read()).done);
    assertEquals(client.idleSockets, 1, "a chunked body read to its end frees the socket");
    assertEquals(await (await client.request(`${server.url}/n`, { method: "GET" })).text(), "{}");
    assertEquals(server.connections, 1);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client reads a long Content-Length body and a body that ends with the server's close", async () => {
  const big = "x".repeat(300_000);
  const server = rawServer(async (conn) => {
    const buffered = { bytes: new Uint8Array() };
    await readRequest(conn, buffered);
    await write(conn, ok(big));
    await readRequest(conn, buffered);
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end");
  });
  const client = new Http1Client();
  try {
    const long = await client.request(`${server.url}/big`, { method: "GET" });
    assertEquals(knownBody(long), undefined, "a long body is read as a stream");
    assertEquals((await long.text()).length, big.length);
    const closeDelimited = await client.request(`${server.url}/close`, { method: "GET" });
    assertEquals(await closeDelimited.text(), "until the end");
    assertEquals(server.connections, 1, "the long body was read whole, so its socket was reused");
    assertEquals(client.idleSockets, 0, "a body that ends with the close leaves no socket to keep");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client skips interim answers and reads bodiless ones (204, HEAD)", async () => {
  const server = rawServer(async (conn) => {
    const buffered = { bytes: new Uint8Array() };
    const first = await readRequest(conn, buffered);
    await write(conn, "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + ok('{"a":1}'));
    assert(first !== null);
    await readRequest(conn, buffered);
    await write(conn, "HTTP/1.1 204 No Content\r\n\r\n");
    await readRequest(conn, buffered);
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n");
    const last = await readRequest(conn, buffered);
    if (last !== null) await write(conn, ok("{}"));
  });
  const client = new Http1Client();
  try {
    assertEquals(await (await client.request(`${server.url}/a`, { method: "GET" })).json(), {
      a: 1,
    });
    const empty = await client.request(`${server.url}/b`, { method: "POST" });
    assertEquals([empty.status, empty.body], [204, null]);
    const head = await client.request(`${server.url}/c`, { method: "HEAD" });
    assertEquals(
      [head.status, await head.text()],
      [200, ""],
      "HEAD has no body, whatever its length",
    );
    assertEquals(await (await client.request(`${server.url}/d`, { method: "GET" })).text(), "{}");
    assertEquals(server.connections, 1);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client sends a request again on a new socket when a reused one was closed unanswered", async () => {
  const server = rawServer(async (conn, index) => {
    const buffered = { bytes: new Uint8Array() };
    await readRequest(conn, buffered);
    await write(conn, ok(`{"socket":${index}}`));
    // The first socket: the next request arrives and the server drops it without a word (as a
    // server closing an idle keep-alive connection does when a request crosses its close).
    if (index === 0) await readRequest(conn, buffered);
  });
  const client = new Http1Client();
  try {
    assertEquals(await (await client.request(server.url, { method: "GET" })).json(), { socket: 0 });
    assertEquals(await (await client.request(server.url, { method: "GET" })).json(), { socket: 1 });
    assertEquals(server.connections, 2);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client: a new socket closed unanswered, a malformed head and a refused port are errors", async () => {
  const server = rawServer(async (conn, index) => {
    await readRequest(conn, { bytes: new Uint8Array() });
    if (index === 1) await write(conn, "HTTP/2 200\r\n\r\n");
    if (index === 2) await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort");
  });
  const client = new Http1Client();
  try {
    await assertRejects(
      () => client.request(server.url, { method: "GET" }),
      TypeError,
      "closed the connection before answering",
    );
    assertEquals(server.connections, 1, "a socket never used before is not retried");
    await assertRejects(
      () => client.request(server.url, { method: "GET" }),
      MalformedResponseError,
      "not HTTP/1.x",
    );
    const truncated = await client.request(server.url, { method: "GET" });
    await assertRejects(() => truncated.text(), TypeError, "before the whole answer");
    assertEquals(client.idleSockets, 0);
  } finally {
    client.close();
    await server.close();
  }
  const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (free.addr as Deno.NetAddr).port;
  free.close();
  await assertRejects(
    () => new Http1Client().request(`http://127.0.0.1:${port}/`, { method: "GET" }),
    Deno.errors.ConnectionRefused,
  );
});

Deno.test("Http1Client: an abort rejects with its reason before the answer and errors the body after it", async () => {
  const closed: number[] = [];
  let release!: () => void;
  const hold = new Promise<void>((r) => release = r);
  const server = rawServer(async (conn, index) => {
    const buffered = { bytes: new Uint8Array() };
    await readRequest(conn, buffered);
    if (index === 1) {
      await write(conn, "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n");
    }
    // Wait for the client to go away (or the test to end).
    await Promise.race([readRequest(conn, buffered), hold]);
    closed.push(index);
  });
  const client = new Http1Client();
  try {
    const before = new AbortController();
    const pending = client.request(server.url, { method: "GET", signal: before.signal });
    while (server.connections < 1) await new Promise((r) => setTimeout(r, 5));
    before.abort(new DOMException("gone", "TimeoutError"));
    await assertRejects(() => pending, DOMException, "gone");

    const during = new AbortController();
    const res = await client.request(server.url, { method: "GET", signal: during.signal });
    const reader = res.body!.getReader();
    assertEquals(dec.decode((await reader.read()).value), "abc");
    during.abort(new Error("stop"));
    await assertRejects(() => reader.read(), Error, "stop");
    while (closed.length < 2) await new Promise((r) => setTimeout(r, 5));
    assertEquals(
      closed.sort(),
      [0, 1],
      "both sockets were closed, so the server saw the client go",
    );
    assertEquals(client.idleSockets, 0);
    await assertRejects(
      () => client.request(server.url, { method: "GET", signal: AbortSignal.abort() }),
      DOMException,
      "aborted",
    );
  } finally {
    release();
    client.close();
    await server.close();
  }
});

// Polls (up to 5 s, timers run late under load) until the client holds no idle socket.
async function idleDropsToZero(client: Http1Client): Promise<boolean> {
  const deadline = Date.now() + 5000;
  while (client.idleSockets > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  return client.idleSockets === 0;
}

Deno.test("Http1Client drops an idle socket the server closed, and idle sockets after the idle timeout", async () => {
  const server = rawServer(async (conn, index) => {
    const buffered = { bytes: new Uint8Array() };
    await readRequest(conn, buffered);
    await write(conn, ok("{}"));
    // The first connection is closed by the server right after its answer (its idle timeout).
    if (index > 0) await readRequest(conn, buffered);
  });
  // Far longer than the poll: only the pending read of the idle socket can notice the close.
  const watching = new Http1Client({ idleTimeoutMs: 60_000 });
  const timing = new Http1Client({ idleTimeoutMs: 100 });
  try {
    await (await watching.request(server.url, { method: "GET" })).text();
    assert(await idleDropsToZero(watching), "the server's close was noticed while idle");
    await (await timing.request(server.url, { method: "GET" })).text();
    assertEquals(server.connections, 2);
    assertEquals(timing.idleSockets, 1);
    assert(await idleDropsToZero(timing), "closed after the idle timeout");
  } finally {
    watching.close();
    timing.close();
    await server.close();
  }
});

Deno.test("Http1Client refuses headers that would split the request, and non-http URLs", async () => {
  const client = new Http1Client();
  await assertRejects(
    () =>
      client.request("http://127.0.0.1:9/", {
        method: "GET",
        headers: { "x-id": "a\r\nx-evil: 1" },
      }),
    TypeError,
    "not a valid HTTP header",
  );
  await assertRejects(
    () => client.request("https://127.0.0.1:9/", { method: "GET" }),
    TypeError,
    "plain http://",
  );
  client.close();
  await assertRejects(() => client.request("http://127.0.0.1:9/", { method: "GET" }), TypeError);
});
