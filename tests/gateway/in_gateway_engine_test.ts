// An embedding engine started in the gateway's own process through the
// management API: served by handler calls with the same answers as an engine process, listed with
// placement "gateway" and the gateway's pid, refused for chat, and freed when stopped.
import OpenAI from "openai";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { EngineStore } from "../../src/gateway/engines/engine_store.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { loadEngineApp } from "../../src/server/engine_server.ts";
import { CHILD_HOME } from "./_child_home.ts";
import { managementApi } from "./_management_api.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const KEY = "gw-key-in-gateway";

const { call, waitState } = managementApi(KEY);

Deno.test("an embedding engine in the gateway's process answers like an engine process, and stops", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    apiKey: KEY,
    health: { intervalMs: 200 },
    management: {
      home: CHILD_HOME,
      store: new EngineStore(join(dir, "engines.json")),
      portCandidates: () => [],
      device: "cpu",
      offline: true,
    },
  });
  // The oracle: the same models loaded as an engine process loads them, called directly.
  const reference = loadEngineApp({
    model: "demo/embed",
    kind: "embedding",
    device: "cpu",
    offline: true,
    cacheDir: join(CHILD_HOME, "hub"),
  });
  try {
    const chat = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/chat",
      placement: "gateway",
    });
    assertEquals(chat.status, 400);
    assertMatch(String((chat.json.error as { message: string }).message), /only embedding engines/);
    const withPort = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/embed",
      placement: "gateway",
      port: 8123,
    });
    assertEquals([withPort.status, (withPort.json.error as { param: string }).param], [
      400,
      "port",
    ]);

    const started = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/embed",
      placement: "gateway",
    });
    assertEquals(started.status, 201, JSON.stringify(started.json));
    const id = started.json.id as string;
    const ready = await waitState(
      gw,
      id,
      (e) => e.state === "ready" || e.state === "error",
      60_000,
    );
    assertEquals(ready.state, "ready", JSON.stringify(ready));
    assertEquals(ready.placement, "gateway");
    assertEquals(ready.pid, Deno.pid);
    assertEquals(ready.port, null);
    assertEquals(ready.models, ["demo/embed"]);
    assertEquals(ready.random_weights, true);
    const again = await call(gw, "POST", "/v1/management/engines", {
      model: "demo/embed",
      placement: "gateway",
    });
    assertEquals([again.status, again.json.id, again.json.reused], [200, id, true]);

    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY });
    const input = ["a retrieval query", "and a second text"];
    const viaGateway = await client.embeddings.create({ model: "demo/embed", input });
    await reference.ready;
    const direct = await (await reference.app(
      new Request("http://engine/v1/embeddings", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "demo/embed", input }),
      }),
    )).json();
    assertEquals(
      viaGateway.data.map((d) => d.embedding),
      direct.data.map((d: { embedding: number[] }) => d.embedding),
    );

    const stopped = await call(gw, "DELETE", `/v1/management/engines/${id}`);
    assertEquals(stopped.json.state, "stopped", JSON.stringify(stopped.json));
    const after = await fetch(`${gw.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo/embed", input: "x" }),
    });
    await after.body?.cancel();
    assert(after.status >= 400, `no engine serves it any more: ${after.status}`);
  } finally {
    await gw.stop();
    await reference.dispose();
  }
});
