// Requests for models whose engines are still loading or failed to load, with real engine
// processes: 503 with Retry-After and a code that says which (never a 404 for a model the
// gateway was configured to serve).
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { CHILD_HOME } from "./_child_home.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

Deno.test("gateway answers 503 model_loading after the wait bound, and 503 naming the failure for a model that failed to load", async () => {
  const started = Math.floor(Date.now() / 1000);
  const gw = await startGateway({
    logger: QUIET,
    loadWaitMs: 0,
    management: {
      home: CHILD_HOME,
      portCandidates: () => [],
      device: "cpu",
      offline: true,
      supervisor: { stopTimeoutMs: 5000 },
    },
    engines: [
      { id: "chat", model: "demo/chat", kind: "chat", persist: false },
      { id: "missing", model: "nobody/no-such-model", kind: "chat", persist: false },
    ],
  });
  const chat = (model: string) =>
    fetch(`${gw.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
  try {
    const loading = await chat("demo/chat");
    assertEquals(loading.status, 503);
    assertEquals((await loading.json()).error.code, "model_loading");
    assert(Number(loading.headers.get("retry-after")) >= 1);

    const manager = gw.gateway.manager!;
    await manager.whenReady("missing", { timeoutMs: 60_000 }).catch(() => {});
    const listed = await (await fetch(`${gw.baseUrl}/models`)).json();
    const missing = listed.data.find((m: { id: string }) => m.id === "nobody/no-such-model");
    assertEquals(missing.status, "failed");
    const failed = await chat("nobody/no-such-model");
    assertEquals(failed.status, 503);
    const body = await failed.json();
    assertEquals(body.error.code, "model_load_failed");
    assertMatch(body.error.message, /failed to load: .*nobody\/no-such-model/);
    assert(failed.headers.get("retry-after") !== null);
    // A model nobody configured is still a 404.
    assertEquals((await chat("nobody/else")).status, 404);

    // Listed as its engine lists it: random weights (a demo model), created when it was started.
    assert(missing.created >= started && missing.created <= Date.now() / 1000, missing.created);
    await manager.whenReady("chat", { timeoutMs: 120_000 });
    const ready = await (await fetch(`${gw.baseUrl}/models/demo/chat`)).json();
    assertEquals([ready.status, ready.random_weights], ["ready", true]);
    assertEquals(ready.created, manager.get("chat").createdAt);
    assert(ready.created >= started && ready.created <= Date.now() / 1000, ready.created);
    assertEquals(missing.random_weights, undefined, "a real model says nothing");
  } finally {
    await gw.stop();
  }
});
