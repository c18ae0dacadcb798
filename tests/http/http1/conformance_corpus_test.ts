// An HTTP/1.1 conformance and smuggling corpus (issue 23): the same raw bytes go to our server and
// to Node's `http.createServer` (llhttp, strict mode) as an oracle, both answering with an echo of
// the request each saw. Our outcome must equal Node's, or be the divergence a case documents (we
// may be stricter on framing than Node, never more lenient: that would be a smuggling risk).
import { Http1Server } from "../../../src/http/http1/http1_server.ts";
import { protocolErrorResponse } from "../../../src/http/http1/protocol_error.ts";
import { SvcException } from "../../../src/core/errors.ts";
import type { HttpLogger } from "../../../src/http/logger.ts";
import { assert, assertEquals } from "../../_assert.ts";
import { RawClient } from "./_raw_client.ts";

/** What a server did with one case's bytes: per final response, `METHOD /target bodyLength` for
 * a 2xx (the request its handler saw) or `rejected` (4xx/5xx); `rejected` alone when it closed
 * without an answer, `pending` when it neither answered nor closed in time. */
type Outcome = string[];

interface Case {
  name: string;
  bytes: string;
  /** Where we knowingly differ from Node: our outcome, and why that is fine. */
  divergence?: { ours: Outcome; why: string };
}

const SMUGGLED = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
const post = (head: string, body = "") => `POST /p HTTP/1.1\r\nHost: x\r\n${head}\r\n${body}`;
const chunked = (te: string) => post(`Transfer-Encoding: ${te}\r\n`, "5\r\nhello\r\n0\r\n\r\n");
const withCl = (cl: string) => post(`Content-Length: ${cl}\r\n`, "hello");
const withHeader = (line: string) => `GET /h HTTP/1.1\r\nHost: x\r\n${line}\r\n\r\n`;

export const CASES: Case[] = [
  { name: "baseline GET", bytes: "GET /a?q=1 HTTP/1.1\r\nHost: x\r\n\r\n" },
  { name: "baseline POST with Content-Length", bytes: withCl("5") },
  { name: "baseline chunked POST", bytes: chunked("chunked") },
  {
    name: "CL.TE (Content-Length then Transfer-Encoding)",
    bytes: post(
      `Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding: chunked\r\n`,
      `0\r\n\r\n${SMUGGLED}`,
    ),
  },
  {
    name: "TE.CL (Transfer-Encoding then Content-Length)",
    bytes: post(
      "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
      `${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`,
    ),
  },
  { name: "TE: xchunked", bytes: chunked("xchunked") },
  { name: "TE: ' chunked' (leading whitespace is OWS)", bytes: chunked(" chunked") },
  { name: "TE: tab before chunked", bytes: chunked("\tchunked") },
  { name: "TE: chunked, identity", bytes: chunked("chunked, identity") },
  {
    name: "TE: identity, chunked",
    bytes: chunked("identity, chunked"),
    divergence: {
      ours: ["rejected"],
      why: "we decode no transfer coding but chunked: 501 instead of ignoring 'identity'",
    },
  },
  {
    name: "TE: duplicated chunked header",
    bytes: post(
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
      "5\r\nhello\r\n0\r\n\r\n",
    ),
  },
  {
    name: "TE with space before colon",
    bytes: chunked("x").replace("Encoding: x", "Encoding : chunked"),
  },
  {
    name: "TE with space before colon and Content-Length",
    bytes: post(
      `Transfer-Encoding : chunked\r\nContent-Length: ${5 + SMUGGLED.length}\r\n`,
      `0\r\n\r\n${SMUGGLED}`,
    ),
  },
  {
    name: "duplicate Content-Length, same value",
    bytes: post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello"),
    divergence: {
      ours: ["POST /p 5"],
      why: "RFC 9110 8.6 lets a recipient take identical repeated lengths: one framing either way",
    },
  },
  {
    name: "duplicate Content-Length, different values",
    bytes: post("Content-Length: 5\r\nContent-Length: 3\r\n", "hello"),
  },
  { name: "Content-Length: +5", bytes: withCl("+5") },
  { name: "Content-Length: 5 5", bytes: withCl("5 5") },
  { name: "Content-Length: 0x5", bytes: withCl("0x5") },
  { name: "Content-Length: -5", bytes: withCl("-5") },
  { name: "obs-fold (continuation line with a space)", bytes: withHeader("X-A: a\r\n b") },
  { name: "obs-fold (continuation line with a tab)", bytes: withHeader("X-A: a\r\n\tb") },
  {
    name: "obs-fold hiding Transfer-Encoding",
    bytes: post("X-A: a\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "hello"),
  },
  {
    name: "bare LF line endings",
    bytes: "GET /lf HTTP/1.1\nHost: x\n\n",
    divergence: {
      ours: ["GET /lf 0"],
      why: "RFC 9112 2.2 lets a recipient take a bare LF as a line end; CR never ends a line here",
    },
  },
  {
    name: "bare CR inside a header value",
    bytes: withHeader("X-A: a\rTransfer-Encoding: chunked"),
  },
  { name: "NUL in a header value", bytes: withHeader("X-A: a\0b") },
  { name: "CTL 0x01 in a header value", bytes: withHeader("X-A: a\x01b") },
  { name: "DEL in a header value", bytes: withHeader("X-A: a\x7fb") },
  { name: "NUL in a header name", bytes: withHeader("X-\0A: b") },
  { name: "CTL 0x01 in a header name", bytes: withHeader("X-\x01A: b") },
  {
    name: "chunk-size overflow",
    bytes: post("Transfer-Encoding: chunked\r\n", "ffffffffffffffffff\r\nhello\r\n0\r\n\r\n"),
  },
  {
    name: "chunk extension",
    bytes: post("Transfer-Encoding: chunked\r\n", "5;ext=1\r\nhello\r\n0\r\n\r\n"),
  },
  {
    name: "chunk size with a bare LF",
    bytes: post("Transfer-Encoding: chunked\r\n", "5\nhello\r\n0\r\n\r\n"),
  },
  {
    name: "chunk extension with a bare CR",
    bytes: post("Transfer-Encoding: chunked\r\n", "5;a\rb\r\nhello\r\n0\r\n\r\n"),
  },
  {
    name: "chunk data longer than its size",
    bytes: post("Transfer-Encoding: chunked\r\n", "3\r\nhello\r\n0\r\n\r\n"),
  },
  {
    name: "trailers after the last chunk",
    bytes: post("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"),
  },
  {
    name: "pipelining three requests in one write",
    bytes: "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n" + withCl("5") +
      "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n",
  },
  {
    name: "Expect: 100-continue, body sent at once",
    bytes: post("Expect: 100-continue\r\nContent-Length: 5\r\n", "hello"),
  },
  {
    name: "HTTP/1.0 with Connection: keep-alive, then a second request",
    bytes: "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\n\r\n",
  },
  { name: "absolute-form target", bytes: "GET http://x/abs?y=2 HTTP/1.1\r\nHost: x\r\n\r\n" },
  { name: "HTTP/1.1 without Host", bytes: "GET /nohost HTTP/1.1\r\n\r\n" },
  {
    name: "request line with two spaces",
    bytes: "GET  /sp HTTP/1.1\r\nHost: x\r\n\r\n",
    divergence: {
      ours: ["rejected"],
      why: "RFC 9112 3 has single spaces; we refuse a request line others may split differently",
    },
  },
  { name: "CTL 0x01 in the request target", bytes: "GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n" },
  { name: "lower-case HTTP version", bytes: "GET /v http/1.1\r\nHost: x\r\n\r\n" },
  { name: "request line with a trailing space", bytes: "GET /sp HTTP/1.1 \r\nHost: x\r\n\r\n" },
];

const CASE_MS = 1500; // at most this long per case, for a server that neither answers nor closes
const QUIET_MS = 150; // after an answer, this long without more bytes ends the case

const NODE_ORACLE = `
const http = require("node:http");
const server = http.createServer((req, res) => {
  let n = 0;
  req.on("data", (c) => (n += c.length));
  req.on("end", () => {
    const body = JSON.stringify({ m: req.method, t: req.url, n });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

const hasNode = (() => {
  try {
    return new Deno.Command("node", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

function ourServer(): Http1Server {
  return new Http1Server(async (req) => {
    const n = req.body === null ? 0 : (await req.arrayBuffer()).byteLength;
    const u = new URL(req.url);
    return Response.json({ m: req.method, t: u.pathname + u.search, n });
  }, {
    hostname: "127.0.0.1",
    port: 0,
    logger: QUIET,
    onError: (err) =>
      err instanceof SvcException
        ? protocolErrorResponse(err)
        : new Response(null, { status: 500 }),
  });
}

async function startNode(): Promise<{ port: number; child: Deno.ChildProcess }> {
  const child = new Deno.Command("node", {
    args: ["-e", NODE_ORACLE],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const timer = setTimeout(() => child.kill(), 10_000);
  try {
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the node oracle exited before printing its port");
      out += value;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel();
  }
  return { port: Number(out.trim()), child };
}

// Splits what a server sent into its final responses (1xx skipped, an unfinished one left out).
function parseResponses(text: string, closed: boolean): { status: number; body: string }[] {
  const out: { status: number; body: string }[] = [];
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf("\r\n\r\n", pos);
    if (end === -1) break;
    const head = text.slice(pos, end);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
    let next: number;
    if (status >= 100 && status < 200) next = end + 4;
    else if (length !== undefined) next = end + 4 + Number(length);
    else if (closed) next = text.length;
    else break;
    if (next > text.length) break;
    if (status >= 200 || status === 0) out.push({ status, body: text.slice(end + 4, next) });
    pos = next;
  }
  return out;
}

function summarize(text: string, closed: boolean): Outcome {
  const responses = parseResponses(text, closed);
  if (responses.length === 0) return [closed ? "rejected" : "pending"];
  return responses.map(({ status, body }) => {
    if (status < 200 || status >= 300) return "rejected";
    const seen = JSON.parse(body) as { m: string; t: string; n: number };
    const u = new URL(seen.t, "http://x");
    return `${seen.m} ${u.pathname + u.search} ${seen.n}`;
  });
}

// Sends one case on a fresh connection and waits for the server to close, or to go quiet after
// an answer, or for the case's deadline.
async function outcomeOf(port: number, bytes: string): Promise<Outcome> {
  const c = await RawClient.open(`http://127.0.0.1:${port}`);
  try {
    try {
      await c.send(new Uint8Array([...bytes].map((ch) => ch.charCodeAt(0))));
    } catch {
      // Closed on us mid-write: what it answered (if anything) still counts.
    }
    let seen = -1;
    let quietSince = Date.now();
    await c.until((client) => {
      if (client.closed) return true;
      if (client.text.length !== seen) {
        seen = client.text.length;
        quietSince = Date.now();
        return false;
      }
      return Date.now() - quietSince >= QUIET_MS &&
        parseResponses(client.text, false).length > 0;
    }, CASE_MS);
    return summarize(c.text, c.closed);
  } finally {
    await c.close();
  }
}

Deno.test({
  name: "HTTP/1.1 conformance corpus: our server frames every case as Node's strict parser does",
  ignore: !hasNode,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const ours = ourServer();
    let node: Awaited<ReturnType<typeof startNode>> | undefined;
    try {
      node = await startNode();
      const nodePort = node.port;
      const results = await Promise.all(CASES.map(async (c) => {
        const [us, them] = await Promise.all([
          outcomeOf(ours.addr.port, c.bytes),
          outcomeOf(nodePort, c.bytes),
        ]);
        return { c, us, them };
      }));
      const report = results.map(({ c, us, them }) =>
        `${c.name}: ours ${JSON.stringify(us)}, node ${JSON.stringify(them)}` +
        (c.divergence ? ` (divergence: ${c.divergence.why})` : "")
      ).join("\n");
      if (Deno.env.get("CORPUS_REPORT")) console.log(report);
      const failures: string[] = [];
      for (const { c, us, them } of results) {
        const want = c.divergence?.ours ?? them;
        if (JSON.stringify(us) !== JSON.stringify(want)) {
          failures.push(
            `${c.name}: ours ${JSON.stringify(us)}, expected ${JSON.stringify(want)}` +
              ` (node ${JSON.stringify(them)})`,
          );
        }
        // A documented divergence must still be one, and never a more lenient one.
        if (c.divergence) {
          assert(JSON.stringify(us) !== JSON.stringify(them), `${c.name}: no longer diverges`);
        }
      }
      assertEquals(failures, []);
      assertEquals(results[0].us, ["GET /a?q=1 0"]);
    } finally {
      if (node) {
        try {
          node.child.kill("SIGKILL");
        } catch {
          // Exited already.
        }
        await node.child.status;
      }
      await ours.shutdown();
    }
  },
});
