// The management API with real engine child processes on the demo models, a registered remote
// engine, error statuses, and persistence across a gateway restart.
import OpenAI from "openai";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { EngineStore } from "../../src/gateway/engines/engine_store.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { CHILD_HOME } from "./_child_home.ts";
import { managementApi } from "./_management_api.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const KEY = "gw-key-789";
const REMOTE_KEY = "remote-key-abc";

function gateway(storePath: string): Promise<GatewayServer> {
  return startGateway({
    logger: QUIET,
    apiKey: KEY,
    health: { intervalMs: 200 },
    management: {
      home: CHILD_HOME,
      store: new EngineStore(storePath),
      portCandidates: () => [],
      device: "cpu",
      offline: true,
      supervisor: { restartDelayMs: 100, stopTimeoutMs: 5000 },
    },
  });
}

const { call, waitState } = managementApi(KEY);

Deno.test("management: start a real engine, reuse it, survive a crash, stop it with drain", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await gateway(join(dir, "engines.json"));
  try {
    const started = await call(gw, "POST", "/v1/management/engines", { model: "demo/chat" });
    assertEquals(started.status, 201, JSON.stringify(started.json));
    assertEquals(started.json.state, "starting");
    assertEquals(started.json.origin, "managed");
    const id = started.json.id as string;
    const ready = await waitState(gw, id, (e) => e.state === "ready");
    assertEquals(ready.models, ["demo/chat"]);
    assertEquals(ready.random_weights, true);
    assertEquals(ready.dtype, "q8", "the cpu default, as the engine reports it");

    const again = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/chat",
      dtype: "q8",
    });
    assertEquals(again.status, 200);
    assertEquals(again.json.reused, true);
    assertEquals(again.json.id, id);
    const badDtype = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/chat",
      dtype: "fp8",
    });
    assertEquals(badDtype.status, 400);
    assertMatch(JSON.stringify(badDtype.json), /fp32.*q4f16.*bnb4/);

    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: KEY, maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "hi" }];
    const chat = await client.chat.completions.create({ model: "demo/chat", messages });
    assertEquals(chat.model, "demo/chat");

    // A crash after readiness: restarted with back-off, same port, served again.
    Deno.kill(ready.pid as number, "SIGKILL");
    const back = await waitState(gw, id, (e) => e.state === "ready" && e.restarts === 1);
    assert(back.pid !== ready.pid);
    assertEquals(back.port, ready.port);
    await client.chat.completions.create({ model: "demo/chat", messages, max_tokens: 2 });

    const status = await call(gw, "GET", "/v1/management/status");
    assertEquals(status.json.ready, true);
    assertEquals((status.json.engines as Record<string, number>).ready, 1);

    // Drain: a stream in flight finishes; the engine stops only afterwards.
    const stream = await client.chat.completions.create({
      model: "demo/chat",
      messages,
      max_tokens: 40,
      temperature: 0,
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const stopping = call(gw, "DELETE", `/v1/management/engines/${id}`);
    await waitState(gw, id, (e) => e.state === "draining", 5_000);
    let rest = 0;
    let finish: string | null = null;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
      rest++;
      finish = r.value.choices[0]?.finish_reason ?? finish;
    }
    assert(rest > 0 && finish !== null, "the stream in flight was answered to its end");
    const stopped = await stopping;
    assertEquals(stopped.status, 200);
    assertEquals(stopped.json.state, "stopped");
    const gone = await call(gw, "POST", "/v1/chat/completions", { model: "demo/chat", messages });
    assertEquals(gone.status, 404);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("management: started engines start again with the gateway, unless persist is false or deleted", async () => {
  const dir = await Deno.makeTempDir();
  const storePath = join(dir, "engines.json");
  let gw = await gateway(storePath);
  const storedIds = async () =>
    JSON.parse(await Deno.readTextFile(storePath)).engines.map((e: { id: string }) => e.id);
  try {
    const kept = await call(gw, "POST", "/v1/management/engines", { model: "demo/embed" });
    const once = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/chat",
      persist: false,
    });
    assertEquals([kept.status, once.status], [201, 201]);
    const keptId = kept.json.id as string;
    const ready = await waitState(gw, keptId, (e) => e.state === "ready");
    await waitState(gw, once.json.id as string, (e) => e.state === "ready");
    assertEquals(await storedIds(), [keptId]);

    await gw.stop();
    gw = await gateway(storePath);
    const listed = await call(gw, "GET", "/v1/management/engines");
    assertEquals((listed.json.data as { id: string }[]).map((e) => e.id), [keptId]);
    const back = await waitState(gw, keptId, (e) => e.state === "ready");
    assertEquals([back.kind, back.port, back.created], [ready.kind, ready.port, ready.created]);
    assert(back.pid !== ready.pid, "a new process");
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: KEY, maxRetries: 0 });
    assertEquals(
      (await client.embeddings.create({ model: "demo/embed", input: "x" })).data.length,
      1,
    );

    await call(gw, "DELETE", `/v1/management/engines/${keptId}`);
    assertEquals(await storedIds(), []);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("management: an engine that cannot start is an error with its own message", async () => {
  const dir = await Deno.makeTempDir();
  const storePath = join(dir, "engines.json");
  const gw = await gateway(storePath);
  try {
    const started = await call(gw, "POST", "/v1/management/engines", {
      model: "nobody/no-such-model",
      kind: "chat",
    });
    assertEquals(started.status, 201);
    const failed = await waitState(gw, started.json.id as string, (e) => e.state === "error");
    assertMatch(failed.message as string, /no-such-model/);
    assertEquals(failed.pid, null);
    assertEquals(gw.gateway.dispatcher.backends().length, 0);
    // Not tried again at the next start.
    const deadline = Date.now() + 5_000;
    let stored = JSON.parse(await Deno.readTextFile(storePath)).engines;
    while (stored.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      stored = JSON.parse(await Deno.readTextFile(storePath)).engines;
    }
    assertEquals(stored, []);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("management: register a remote engine, errors 400/404/409, persistence across restart", async () => {
  const dir = await Deno.makeTempDir();
  const storePath = join(dir, "state", "engines.json");
  const remote = serveApp(
    createEngineApp({
      engines: [new FakeEngine({ id: "fake/embed", kind: "embedding", dimensions: 8 })],
      apiKey: REMOTE_KEY,
      logger: QUIET,
    }),
    { port: 0, logger: QUIET },
  );
  const remoteUrl = `${remote.url}/v1`;
  let gw = await gateway(storePath);
  try {
    const registered = await call(gw, "POST", "/v1/management/engines/register", {
      id: "tei-1",
      base_url: remoteUrl,
      kind: "embedding",
      api_key: REMOTE_KEY,
    });
    assertEquals(registered.status, 201, JSON.stringify(registered.json));
    assertEquals(registered.json.models, ["fake/embed"], "models asked from the server");
    assertEquals(registered.json.state, "ready");
    assertEquals(registered.json.origin, "remote");

    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: KEY, maxRetries: 0 });
    const emb = await client.embeddings.create({ model: "fake/embed", input: "x" });
    assertEquals(emb.data[0].embedding.length, 8);

    const errors: [string, string, unknown, number][] = [
      ["POST", "/v1/management/engines/register", { base_url: remoteUrl, kind: "embedding" }, 409],
      ["POST", "/v1/management/engines/register", {
        id: "tei-1",
        base_url: "http://127.0.0.1:1/v1",
        kind: "chat",
        models: ["m"],
      }, 409],
      ["POST", "/v1/management/engines/register", { base_url: "ftp://x/v1", kind: "chat" }, 400],
      ["POST", "/v1/management/engines/register", { base_url: "http://h/v2", kind: "chat" }, 400],
      ["POST", "/v1/management/engines/register", { base_url: remoteUrl }, 400],
      ["POST", "/v1/management/engines/register", {
        base_url: "http://127.0.0.1:1/v1",
        kind: "chat",
      }, 400],
      ["POST", "/v1/management/engines", { model: 5 }, 400],
      ["POST", "/v1/management/engines", { model: "demo/chat", port: 99999 }, 400],
      ["POST", "/v1/management/engines", { model: "demo/chat", colour: "red" }, 400],
      ["POST", "/v1/management/engines", { model: "demo/chat", port: remote.addr.port }, 409],
      ["POST", "/v1/management/engines", { model: "demo/chat", id: "tei-1" }, 409],
      ["GET", "/v1/management/engines/nope", undefined, 404],
      ["DELETE", "/v1/management/engines/nope", undefined, 404],
      ["DELETE", "/v1/management/engines/tei-1?drain_timeout_ms=-4", undefined, 400],
    ];
    for (const [method, path, body, status] of errors) {
      const res = await call(gw, method, path, body);
      assertEquals(res.status, status, `${method} ${path} ${JSON.stringify(body)}`);
      assert(typeof (res.json.error as { message?: string }).message === "string");
    }
    const noKey = await fetch(`${gw.url}/v1/management/engines`);
    assertEquals(noKey.status, 401);
    await noKey.body?.cancel();

    const listed = await call(gw, "GET", "/v1/management/engines");
    assert(!JSON.stringify(listed.json).includes(REMOTE_KEY), "no key in the list");
    const stored = await Deno.readTextFile(storePath);
    assertMatch(stored, /"tei-1"/);
    if (Deno.build.os !== "windows") {
      assertEquals((await Deno.stat(storePath)).mode! & 0o777, 0o600);
    }

    // Restart: the registration comes back and serves at once.
    await gw.stop();
    gw = await gateway(storePath);
    const restored = await call(gw, "GET", "/v1/management/engines/tei-1");
    assertEquals(restored.json.state, "ready");
    const client2 = new OpenAI({ baseURL: gw.baseUrl, apiKey: KEY, maxRetries: 0 });
    assertEquals(
      (await client2.embeddings.create({ model: "fake/embed", input: "y" })).data.length,
      1,
    );

    const stopped = await call(gw, "DELETE", "/v1/management/engines/tei-1");
    assertEquals(stopped.json.state, "stopped");
    assertEquals(JSON.parse(await Deno.readTextFile(storePath)).engines, []);
  } finally {
    await gw.stop();
    await remote.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("management: concurrent starts of one model start one engine; of two, two ports", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await gateway(join(dir, "engines.json"));
  try {
    const manager = gw.gateway.manager!;
    const [a, b, c] = await Promise.all([
      manager.startEngine({ model: "demo/chat" }),
      manager.startEngine({ model: "demo/chat" }),
      manager.startEngine({ model: "demo/embed" }),
    ]);
    assertEquals([a.created, b.created, c.created], [true, false, true]);
    assertEquals(b.engine.id, a.engine.id);
    assertEquals(c.engine.kind, "embedding");
    assert(a.engine.port !== c.engine.port);
    await Promise.all([manager.whenReady(a.engine.id), manager.whenReady(c.engine.id)]);
    assertEquals(manager.list().filter((e) => e.state === "ready").length, 2);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("management: a registered Svc demo engine keeps random_weights and its rerankers list as rerank, across a restart", async () => {
  const dir = await Deno.makeTempDir();
  const storePath = join(dir, "state", "engines.json");
  const embed = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  const rerankOnly = await demoEngineServer("demo/rerank");
  let gw = await gateway(storePath);
  const models = async () => {
    const res = await fetch(`${gw.baseUrl}/models`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const body = await res.json();
    return Object.fromEntries(
      body.data.map((m: Record<string, unknown>) => [
        `${m.id}@${(m.backends as string[]).join(",")}`,
        [m.kind, m.random_weights ?? false],
      ]),
    );
  };
  try {
    const a = await call(gw, "POST", "/v1/management/engines/register", {
      id: "svc-embed",
      base_url: embed.baseUrl,
      kind: "embedding",
    });
    assertEquals(a.status, 201, JSON.stringify(a.json));
    assertEquals(a.json.random_weights, true);
    // A reranker registered with the kind that says so, its models given (nothing asked).
    const b = await call(gw, "POST", "/v1/management/engines/register", {
      id: "svc-rerank",
      base_url: rerankOnly.baseUrl,
      kind: "rerank",
      models: ["demo/rerank"],
    });
    assertEquals(b.status, 201, JSON.stringify(b.json));
    const want = {
      "demo/embed@svc-embed": ["embedding", true],
      "demo/rerank@svc-embed,svc-rerank": ["rerank", true],
    };
    assertEquals(await models(), want);

    await gw.stop();
    gw = await gateway(storePath);
    assertEquals(await models(), want, "the same after a restart");
    const ranked = await fetch(`${gw.baseUrl}/rerank`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo/rerank", query: "q", documents: ["a", "b"] }),
    });
    assertEquals(ranked.status, 200);
    await ranked.body?.cancel();
  } finally {
    await gw.stop();
    await embed.stop();
    await rerankOnly.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
