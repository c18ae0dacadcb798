// Detection order with stand-in services up and down on free ports (never the real SvcPorts).
import { assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { AuthenticationError, ConfigurationError, ServiceError } from "../../src/core/errors.ts";
import { join } from "node:path";
import { detectEndpoints, findService, localChatUrls } from "../../src/client/detect_endpoints.ts";
import { updateServeState } from "../../src/cli/serve_state.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import {
  chatAnswer,
  closedPort,
  errorAnswer,
  modelList,
  type StandIn,
  standIn,
} from "./_stand_in.ts";

// A stand-in Svc service: lists `models`, answers chat with its own name.
function service(name: string, models: { id: string; kind?: string }[], key?: string): StandIn {
  return standIn((req, seen) => {
    if (key !== undefined && req.headers.get("authorization") !== `Bearer ${key}`) {
      return errorAnswer(401, `${name} wants a key`, { type: "authentication_error" });
    }
    const path = new URL(req.url).pathname;
    if (path === "/v1/models") return modelList(models);
    if (path === "/health") return Response.json({ status: "ok" });
    if (path === "/v1/chat/completions") {
      return chatAnswer((seen.body as { model: string }).model, `from ${name}`);
    }
    if (path === "/v1/embeddings") {
      return Response.json({ object: "list", data: [{ index: 0, embedding: [name.length] }] });
    }
    return new Response("not here", { status: 404 });
  });
}

function ports(gateway: number, engines: number[], embedding: number) {
  return {
    env: {},
    envFile: null,
    gatewayPort: gateway,
    llmPorts: engines,
    embeddingPort: embedding,
    probeTimeoutMs: 300,
    serveState: null,
  };
}

Deno.test("detection prefers the gateway for both kinds when it answers", async () => {
  const gw = service("gateway", [{ id: "g-chat", kind: "chat" }, {
    id: "g-emb",
    kind: "embedding",
  }]);
  const engine = service("engine", [{ id: "e-chat", kind: "chat" }]);
  const emb = service("embedder", [{ id: "e-emb", kind: "embedding" }]);
  try {
    const client = await UnifiedInferenceClient.createAuto(
      ports(gw.port, [engine.port], emb.port),
    );
    assertEquals(client.mode, "simple");
    assertEquals(client.endpoints.chat, {
      baseUrl: gw.baseUrl,
      model: "g-chat",
      source: "gateway",
      hasKey: false,
    });
    assertEquals(client.endpoints.embedding.model, "g-emb");
    assertEquals((await client.chat("hi")).text, "from gateway");
  } finally {
    await Promise.all([gw.close(), engine.close(), emb.close()]);
  }
});

Deno.test("detection falls to the engines in port order, then the embedding port", async () => {
  const down = closedPort();
  const first = service("first", [{ id: "c1", kind: "chat" }]);
  const second = service("second", [{ id: "c2", kind: "chat" }]);
  const emb = service("embedder", [{ id: "e1", kind: "embedding" }]);
  try {
    const found = await detectEndpoints(
      ports(down, [closedPort(), first.port, second.port], emb.port),
    );
    assertEquals(found.chat.baseUrl, first.baseUrl);
    assertEquals(found.chat.model, "c1");
    assertEquals(found.chat.source, "engine");
    assertEquals(found.embedding.baseUrl, emb.baseUrl);
    assertEquals(found.embedding.model, "e1");
    assertEquals(found.probes.map((p) => p.answered), [false, false, true, true, true]);
    // The gateway answers but serves no chat model yet: chat goes on to the engine.
    const gw = service("gateway", [{ id: "g-emb", kind: "embedding" }]);
    try {
      const again = await detectEndpoints(ports(gw.port, [first.port], emb.port));
      assertEquals(again.chat.baseUrl, first.baseUrl);
      assertEquals(again.embedding.baseUrl, gw.baseUrl);
    } finally {
      await gw.close();
    }
  } finally {
    await Promise.all([first.close(), second.close(), emb.close()]);
  }
});

Deno.test("an explicit SVC_CHAT_BASE_URL wins over a local service; SVC_*_MODEL override names", async () => {
  const local = service("local", [{ id: "local-chat", kind: "chat" }]);
  const remote = service("remote", [{ id: "r" }], "remote-key");
  try {
    const client = await UnifiedInferenceClient.create({
      ...ports(local.port, [], closedPort()),
      env: {
        SVC_CHAT_BASE_URL: remote.baseUrl,
        SVC_CHAT_API_KEY: "remote-key",
        SVC_CHAT_MODEL: "chosen-chat",
        SVC_EMBEDDING_MODEL: "chosen-emb",
      },
    });
    assertEquals(client.endpoints.chat.source, "env");
    assertEquals(client.endpoints.chat.model, "chosen-chat");
    assertEquals((await client.chat("hi")).text, "from remote");
    assertEquals((remote.seen.at(-1)!.body as { model: string }).model, "chosen-chat");
    // Embeddings were not explicit: detected locally, with the overriding model name.
    assertEquals(client.endpoints.embedding.baseUrl, local.baseUrl);
    assertEquals(client.endpoints.embedding.model, "chosen-emb");
  } finally {
    await Promise.all([local.close(), remote.close()]);
  }
});

Deno.test("the cloud API is used only when nothing local answers, with its bearer key", async () => {
  const cloud = service("cloud", [{ id: "gpt-x" }, { id: "text-embedding-x" }], "sk-cloud");
  const env = { COMPAT_BASE_URL: cloud.baseUrl, COMPAT_API_KEY: "sk-cloud" };
  const engine = service("engine", [{ id: "c", kind: "chat" }]);
  try {
    // A local engine answers: no cloud, not even for embeddings.
    const local = await UnifiedInferenceClient.create({
      ...ports(closedPort(), [engine.port], closedPort()),
      env,
    });
    assertEquals(local.endpoints.chat.source, "engine");
    assertEquals(local.endpoints.embedding.source, "none");
    await assertRejects(() => local.embed("x"), ConfigurationError);
    assertEquals(cloud.seen.length, 0);

    await engine.close();
    const remote = await UnifiedInferenceClient.create({
      ...ports(closedPort(), [engine.port], closedPort()),
      env,
    });
    assertEquals(remote.endpoints.chat.source, "cloud");
    assertEquals(remote.endpoints.chat.hasKey, true);
    // Models come from the cloud's own list, by name.
    assertEquals((await remote.chat("hi")).model, "gpt-x");
    assertEquals(await remote.embed("x"), [[5]]);
    assertEquals((cloud.seen.at(-1)!.body as { model: string }).model, "text-embedding-x");
    assertEquals(cloud.seen.every((r) => r.authorization === "Bearer sk-cloud"), true);

    // SVC_CHAT_API_KEY is the fallback key; a wrong key is an AuthenticationError from the cloud.
    const wrong = await UnifiedInferenceClient.create({
      ...ports(closedPort(), [], closedPort()),
      env: { COMPAT_BASE_URL: cloud.baseUrl, SVC_CHAT_API_KEY: "nope", SVC_CHAT_MODEL: "gpt-x" },
    });
    const err = await assertRejects(() => wrong.chat("hi"), AuthenticationError);
    assertEquals(err.status, 401);
    assertMatch(err.message, /cloud wants a key/);
  } finally {
    await Promise.all([cloud.close(), engine.close()]);
  }
});

Deno.test("a local service that wants a key counts as answering and gets ENGINE_API_KEY", async () => {
  const engine = service("engine", [{ id: "c", kind: "chat" }], "engine-key");
  try {
    const without = await detectEndpoints({ ...ports(closedPort(), [engine.port], closedPort()) });
    assertEquals(without.chat.baseUrl, engine.baseUrl);
    assertEquals(without.probes[1].detail, "it requires a key");
    const client = await UnifiedInferenceClient.create({
      ...ports(closedPort(), [engine.port], closedPort()),
      env: { ENGINE_API_KEY: "engine-key" },
    });
    assertEquals(client.endpoints.chat.model, "c");
    assertEquals((await client.chat("hi")).text, "from engine");
  } finally {
    await engine.close();
  }
});

Deno.test("status() reports the mode, the endpoints and what answers now", async () => {
  const engine = service("engine", [{ id: "c", kind: "chat" }]);
  const client = await UnifiedInferenceClient.create(
    ports(closedPort(), [engine.port], closedPort()),
  );
  try {
    const up = await client.status();
    assertEquals(up.mode, "simple");
    assertEquals(up.chat.available, true);
    assertEquals(up.chat.models, ["c"]);
    assertEquals(up.embedding.available, false);
    assertEquals(up.embedding.detail, "no endpoint configured");
  } finally {
    await engine.close();
  }
  const down = await client.status();
  assertEquals(down.chat.available, false);
  assertMatch(down.chat.detail!, /not reachable/);
});

Deno.test("create() rejects controlPlaneUrl together with embedded, and bad URLs", async () => {
  await assertRejects(
    () =>
      UnifiedInferenceClient.create({ controlPlaneUrl: "http://127.0.0.1:1/v1", embedded: true }),
    ConfigurationError,
    "not both",
  );
  await assertRejects(
    () => UnifiedInferenceClient.create({ controlPlaneUrl: "ftp://x/v1" }),
    ConfigurationError,
    "controlPlaneUrl",
  );
  await assertRejects(
    () => UnifiedInferenceClient.create({ env: { SVC_CHAT_BASE_URL: "::" }, envFile: null }),
    ConfigurationError,
    "SVC_CHAT_BASE_URL",
  );
});

Deno.test("findService: the first candidate in order that lists models wins, with their kinds", async () => {
  const other = service("other", [{ id: "o" }]);
  const svc = service("svc", [
    { id: "demo/rerank", kind: "rerank" },
    { id: "demo/embed", kind: "embedding" },
    { id: "demo/chat", kind: "chat" },
    { id: "vllm-model" }, // other servers list no kind: the name decides
    { id: "bge-small" },
  ]);
  const notOpenAi = standIn(() => new Response("<html>", { status: 404 }));
  try {
    const found = await findService(
      [`http://127.0.0.1:${closedPort()}/v1`, notOpenAi.baseUrl, `${svc.baseUrl}/`, other.baseUrl],
      { probeTimeoutMs: 300 },
    );
    assertEquals(found.baseUrl, svc.baseUrl);
    assertEquals(found.models.map((m) => `${m.id}:${m.kind}`), [
      "demo/rerank:rerank",
      "demo/embed:embedding",
      "demo/chat:chat",
      "vllm-model:chat",
      "bge-small:embedding",
    ]);
    // The first chat model: never a reranker or an embedding model.
    assertEquals(found.models.find((m) => m.kind === "chat")?.id, "demo/chat");
  } finally {
    await Promise.all([other.close(), svc.close(), notOpenAi.close()]);
  }
});

Deno.test("findService: a refused key ends the search; none answering names every URL tried", async () => {
  const locked = service("locked", [{ id: "c" }], "right");
  const open = service("open", [{ id: "c" }]);
  try {
    const err = await assertRejects(
      () => findService([locked.baseUrl, open.baseUrl], { apiKey: "wrong" }),
      AuthenticationError,
    );
    assertMatch(err.message, /locked wants a key.*SVC_CHAT_API_KEY/);
    assertEquals(locked.seen[0].authorization, "Bearer wrong");
    const ok = await findService([locked.baseUrl, open.baseUrl], { apiKey: "right" });
    assertEquals(ok.baseUrl, locked.baseUrl);
  } finally {
    await Promise.all([locked.close(), open.close()]);
  }
  const [a, b] = [closedPort(), closedPort()];
  const none = await assertRejects(
    () => findService([`http://127.0.0.1:${a}/v1`, `http://127.0.0.1:${b}`], { hint: "do X" }),
    ServiceError,
  );
  assertEquals(none.code, "no_server");
  assertEquals(
    none.message,
    `no OpenAI-compatible server answered at http://127.0.0.1:${a}/v1, http://127.0.0.1:${b}: do X`,
  );
});

Deno.test("detection tries the gateway and engines that svc llm serve recorded in SVC_HOME first", async () => {
  const gw = service("serve-gateway", [{ id: "s-chat", kind: "chat" }, {
    id: "s-emb",
    kind: "embedding",
  }]);
  const other = service("default-gateway", [{ id: "d-chat", kind: "chat" }]);
  const home = await Deno.makeTempDir({ prefix: "svc-detect-" });
  const statePath = join(home, "engines", "serve.env");
  const enginePort = closedPort();
  try {
    await Deno.mkdir(join(home, "engines"));
    // Written as `svc llm serve` writes it (src/cli/serve_state.ts).
    await updateServeState(statePath, {
      pid: Deno.pid,
      gatewayUrl: gw.baseUrl,
      llmPort: enginePort,
      embeddingUrl: `http://127.0.0.1:${closedPort()}/v1`,
    });
    // The default path: <SVC_HOME>/engines/serve.env.
    const options = { ...ports(other.port, [], closedPort()), serveState: undefined };
    const env = { SVC_HOME: home };
    const client = await UnifiedInferenceClient.createAuto({ ...options, env });
    assertEquals(client.endpoints.chat.baseUrl, gw.baseUrl);
    assertEquals(client.endpoints.chat.source, "gateway");
    assertEquals(client.endpoints.chat.model, "s-chat");
    assertEquals(client.endpoints.embedding.baseUrl, gw.baseUrl);
    assertEquals((await client.chat("hi")).text, "from serve-gateway");
    // The order svc llm chat searches: the serve's gateway, the default gateway, its engine.
    assertEquals((await localChatUrls({ ...options, env })).slice(0, 3), [
      gw.baseUrl,
      other.baseUrl,
      `http://127.0.0.1:${enginePort}/v1`,
    ]);

    // A serve that stopped (no pid recorded) is not looked for.
    await updateServeState(statePath, { pid: null });
    const after = await detectEndpoints({ ...options, env });
    assertEquals(after.chat.baseUrl, other.baseUrl);
    assertEquals(after.probes.map((p) => p.baseUrl).includes(gw.baseUrl), false);
  } finally {
    await Promise.all([gw.close(), other.close()]);
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("status() lists only the models of each endpoint's kind, and the model calls would use", async () => {
  const gw = service("gateway", [
    { id: "emb", kind: "embedding" },
    { id: "rr", kind: "rerank" },
    { id: "chatty", kind: "chat" },
    { id: "chatty-2", kind: "chat" },
  ]);
  try {
    for (
      const client of [
        await UnifiedInferenceClient.create({
          ...ports(closedPort(), [], closedPort()),
          llmBaseUrl: gw.baseUrl,
          embeddingBaseUrl: gw.baseUrl,
        }),
        await UnifiedInferenceClient.create({
          env: {},
          envFile: null,
          controlPlaneUrl: gw.baseUrl,
        }),
      ]
    ) {
      const status = await client.status();
      assertEquals(status.chat.models, ["chatty", "chatty-2"]);
      assertEquals(status.chat.model, "chatty");
      assertEquals(status.embedding.models, ["emb", "rr"]);
      assertEquals(status.embedding.model, "emb");
    }
    const chosen = await UnifiedInferenceClient.create({
      env: {},
      envFile: null,
      controlPlaneUrl: gw.baseUrl,
      llmModel: "chatty-2",
    });
    assertEquals((await chosen.status()).chat.model, "chatty-2");
  } finally {
    await gw.close();
  }
});
