// The per-client connection cap (maxConnectionsPerClient): one address cannot hold every slot.
import net from "node:net";
import { ClientConnections, clientKey } from "../../../src/http/http1/client_limit.ts";
import { Http1Server } from "../../../src/http/http1/http1_server.ts";
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from "../../../src/http/http1/limits.ts";
import type { HttpLogger } from "../../../src/http/logger.ts";
import { waitFor } from "../../_helpers/wait.ts";
import { assert, assertEquals, assertMatch } from "../../_assert.ts";
import { firstJsonBody, RawClient } from "./_raw_client.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const GET = "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n";
// A slowloris client: a head that never ends.
const PARTIAL = "GET /ok HTTP/1.1\r\nHost: x\r\nX-Slow: ";

// Loopback peers are exempt by default; these tests have only loopback addresses to attack from.
function serve(limits: Partial<HttpLimits>, hostname = "127.0.0.1"): Http1Server {
  return new Http1Server(() => Promise.resolve(Response.json({ ok: true })), {
    hostname,
    port: 0,
    limits,
    logger: QUIET,
    onError: () => new Response(null, { status: 500 }),
    capLoopbackClients: true,
  });
}

function urlOf(server: Http1Server, host: string): string {
  return `http://${host}:${server.addr.port}`;
}

// The server counts a closed socket out once it notices the close.
function countedOut(server: Http1Server, host: string, open = 0): Promise<void> {
  return waitFor(() => server.clientConnections(host) === open, {
    timeoutMs: 3000,
    what: `${open} connections counted for ${host} (${server.clientConnections(host)} are)`,
  });
}

// The status of the first answer on `c` (0 when none came within 3 s).
async function statusOf(c: RawClient): Promise<number> {
  const done = await c.until((x) => x.closed || x.text.includes("}"), 3000);
  return done ? Number(c.text.slice(9, 12)) || 0 : 0;
}

// Opens `n` connections at once, each sending a request; their statuses, sorted.
async function statusesAtOnce(url: string, n: number): Promise<number[]> {
  const clients = await Promise.all(Array.from({ length: n }, () => RawClient.open(url)));
  try {
    await Promise.all(clients.map((c) => c.send(GET)));
    return (await Promise.all(clients.map(statusOf))).sort();
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

async function openPartial(url: string, n: number): Promise<RawClient[]> {
  const clients: RawClient[] = [];
  for (let i = 0; i < n; i++) {
    const c = await RawClient.open(url);
    clients.push(c);
    await c.send(PARTIAL);
  }
  return clients;
}

function assertRefusedPerClient(c: RawClient, max: number): void {
  assertMatch(c.text, /^HTTP\/1\.1 503 /);
  assertMatch(c.text, /\r\nconnection: close\r\n/i);
  assertMatch(c.text, /\r\nretry-after: 1\r\n/i);
  const body = firstJsonBody(c.text);
  assertEquals(body.error.code, "too_many_client_connections");
  assertEquals(body.error.type, "service_unavailable_error");
  assertMatch(String(body.error.message), new RegExp(`\\b${max}\\b`));
}

Deno.test("clientKey() keys IPv4 by address, IPv6 by its /64, and IPv4-mapped IPv6 as IPv4", () => {
  assertEquals(clientKey("203.0.113.7"), "203.0.113.7");
  assertEquals(clientKey("::ffff:203.0.113.7"), "203.0.113.7");
  assertEquals(clientKey("::FFFF:cb00:7107"), "203.0.113.7");
  const a = clientKey("2001:db8:1:2:aaaa::1");
  assertEquals(a, "2001:db8:1:2::/64");
  assertEquals(clientKey("2001:0db8:0001:0002:bbbb:cccc:dddd:eeee"), a);
  assertEquals(clientKey("2001:db8:1:2::9%eth0"), a);
  assert(clientKey("2001:db8:1:3::1") !== a, "another /64 is another client");
  assertEquals(clientKey("2001:db8::"), "2001:db8:0:0::/64");
  assertEquals(clientKey("::"), "0:0:0:0::/64");
});

Deno.test("ClientConnections caps each client, exempts loopback unless asked, and releases once", () => {
  const clients = new ClientConnections(2);
  const first = clients.admit("198.51.100.1");
  const second = clients.admit("::ffff:198.51.100.1");
  assert(first && second, "two connections are admitted");
  assertEquals(clients.admit("198.51.100.1"), undefined, "a third is refused");
  assert(clients.admit("198.51.100.2"), "another address has its own count");
  first();
  first(); // a second release of the same connection changes nothing
  assertEquals(clients.count("198.51.100.1"), 1);
  assert(clients.admit("198.51.100.1"), "a slot freed by a close is usable again");
  assertEquals(clients.admit("198.51.100.1"), undefined, "but only one");
  for (let i = 0; i < 5; i++) assert(clients.admit("127.0.0.1"), "loopback is exempt by default");
  assertEquals(clients.count("127.0.0.1"), 0);
  const capped = new ClientConnections(1, { capLoopback: true });
  assert(capped.admit("::1"));
  assertEquals(capped.admit("::1"), undefined);
});

Deno.test("resolveHttpLimits() defaults maxConnectionsPerClient below maxConnections", () => {
  assertEquals(DEFAULT_HTTP_LIMITS.maxConnectionsPerClient, 256);
  assert(DEFAULT_HTTP_LIMITS.maxConnectionsPerClient < DEFAULT_HTTP_LIMITS.maxConnections);
});

Deno.test("Http1Server answers a client over maxConnectionsPerClient with a 503 JSON error, and counts its closed sockets out", async () => {
  const server = serve({ maxConnections: 64, maxConnectionsPerClient: 8 });
  const url = urlOf(server, "127.0.0.1");
  const held = await openPartial(url, 8);
  const extra: RawClient[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      const c = await RawClient.open(url);
      extra.push(c);
      assert(await c.untilClosed(3000), "a connection over the per-client cap is closed");
      assertRefusedPerClient(c, 8);
    }
    assertEquals(server.clientConnections("127.0.0.1"), 8, "refused connections are not counted");
    for (const c of held) assert(!c.closed, "the held connections stay open until their timeout");
    await Promise.all(held.map((c) => c.close()));
    await countedOut(server, "127.0.0.1");
    // The same address can hold all 8 again, and no more.
    assertEquals(await statusesAtOnce(url, 9), [200, 200, 200, 200, 200, 200, 200, 200, 503]);
  } finally {
    await Promise.all([...held, ...extra].map((c) => c.close()));
    await server.shutdown();
  }
});

Deno.test("Http1Server releases a client's slot exactly once however its connection closes", async () => {
  const max = 2;
  const server = serve({
    maxConnectionsPerClient: max,
    headerTimeoutMs: 200,
    keepAliveTimeoutMs: 200,
  });
  const url = urlOf(server, "127.0.0.1");
  const counted = (open: number) => countedOut(server, "127.0.0.1", open);
  const ways: Record<string, (c: RawClient) => Promise<void>> = {
    "client closes mid-headers": async (c) => {
      await c.send(PARTIAL);
      await counted(1);
      await c.close();
    },
    "client resets with answers unread": async (c) => {
      await c.send(GET + GET + GET);
      await counted(1);
      // Time for answers to arrive unread, so the close is a reset (a plain close is fine too).
      await new Promise((r) => setTimeout(r, 20));
      await c.close();
    },
    "header timeout (408)": async (c) => {
      await c.send(PARTIAL);
      assert(await c.untilClosed(3000));
      assertMatch(c.text, /^HTTP\/1\.1 408 /);
    },
    "malformed request (400)": async (c) => {
      await c.send("NOT HTTP\r\n\r\n");
      assert(await c.untilClosed(3000));
      assertMatch(c.text, /^HTTP\/1\.1 400 /);
    },
    "Connection: close": async (c) => {
      await c.send("GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      assert(await c.untilClosed(3000));
      assertMatch(c.text, /^HTTP\/1\.1 200 /);
    },
    "keep-alive timeout": async (c) => {
      await c.send(GET);
      assert(await c.untilClosed(3000));
      assertMatch(c.text, /^HTTP\/1\.1 200 /);
    },
  };
  const idle: RawClient[] = [];
  try {
    for (const [way, run] of Object.entries(ways)) {
      // More closes than the cap: a leak of one per close would leave the client refused.
      for (let i = 0; i < 2 * max; i++) {
        const c = await RawClient.open(url, { read: !way.includes("unread") });
        try {
          await run(c);
        } finally {
          await c.close();
        }
        await counted(0);
      }
      assertEquals(await statusesAtOnce(url, max + 1), [200, 200, 503], `after: ${way}`);
      await counted(0);
    }
    // Idle keep-alive connections closed by a shutdown are counted out too.
    for (let i = 0; i < max; i++) {
      const c = await RawClient.open(url);
      idle.push(c);
      await c.send(GET);
      assertEquals(await statusOf(c), 200);
    }
    await counted(max);
    await server.shutdown();
    assertEquals(server.clientConnections("127.0.0.1"), 0);
  } finally {
    await Promise.all(idle.map((c) => c.close()));
    await server.shutdown();
  }
});

// A second client address: Linux sends from 127.0.0.1 to any 127.x address, so the client binds
// its end to 127.0.0.2 (which needs net access to 127.0.0.2: `deno test -A`).
const OTHER_HOST = "127.0.0.2";
const otherHostAllowed =
  Deno.permissions.querySync({ name: "net", host: OTHER_HOST }).state === "granted";

// The status of one request from a socket bound to `localAddress`, kept open until all answered.
function statusesFrom(localAddress: string, port: number, n: number): Promise<number[]> {
  const one = () =>
    new Promise<{ status: number; socket: net.Socket }>((resolve, reject) => {
      const socket = net.connect(
        { host: "127.0.0.1", port, localAddress },
        () => socket.write(GET),
      );
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("}")) resolve({ status: Number(text.slice(9, 12)), socket });
      });
      socket.on("error", reject);
      socket.on("close", () => resolve({ status: Number(text.slice(9, 12)) || 0, socket }));
    });
  return Promise.all(Array.from({ length: n }, one)).then((answers) => {
    for (const { socket } of answers) socket.destroy();
    return answers.map((a) => a.status).sort();
  });
}

Deno.test({
  name: "Http1Server keeps serving other addresses while one holds partial heads on every slot",
  ignore: !otherHostAllowed,
  fn: async () => {
    const server = serve({ maxConnections: 32, maxConnectionsPerClient: 8 });
    const url = urlOf(server, "127.0.0.1");
    // As many as the server has slots: all of them without the per-client cap.
    const held = await openPartial(url, 32);
    try {
      await waitFor(() => held.filter((c) => c.closed).length >= 24, {
        timeoutMs: 3000,
        what: "the attacker's connections over its cap to be refused",
      });
      const refused = held.filter((c) => c.closed);
      assertEquals(refused.length, 24, "8 of the attacker's are held");
      for (const c of refused) assertRefusedPerClient(c, 8);
      const served = await statusesFrom(OTHER_HOST, server.addr.port, 8);
      assertEquals(served, Array(8).fill(200), "another address is served");
      await Promise.all(held.map((c) => c.close()));
      await countedOut(server, "127.0.0.1");
      assertEquals(await statusesAtOnce(url, 8), Array(8).fill(200), "and the attacker's again");
    } finally {
      await Promise.all(held.map((c) => c.close()));
      await server.shutdown();
    }
  },
});
