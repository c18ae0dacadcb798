// Requests for models whose engines are still loading or failed to load, with real engine
// processes: 503 with Retry-After and a code that says which (never a 404 for a model the
// gateway was configured to serve).
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import type { StartEngineRequest } from "../../src/gateway/engines/engine_types.ts";
import { CHILD_HOME } from "./_child_home.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

/** A gateway that starts `engines` as real processes and answers at once while they load. */
function startLoadingGateway(engines: StartEngineRequest[]) {
  return startGateway({
    logger: QUIET,
    loadWaitMs: 0,
    management: {
      home: CHILD_HOME,
      portCandidates: () => [],
      device: "cpu",
      offline: true,
      supervisor: { stopTimeoutMs: 5000 },
    },
    engines,
  });
}

Deno.test("gateway answers 503 model_loading after the wait bound, and 503 naming the failure for a model that failed to load", async () => {
  const started = Math.floor(Date.now() / 1000);
  const gw = await startLoadingGateway([
    { id: "chat", model: "demo/chat", kind: "chat", persist: false },
    { id: "missing", model: "nobody/no-such-model", kind: "chat", persist: false },
  ]);
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

Deno.test("gateway: a rerank request while its engine loads gets 503 model_loading, and /health/ready waits for every engine it started", async () => {
  const gw = await startLoadingGateway([
    { id: "chat", model: "demo/chat", kind: "chat", persist: false },
    {
      id: "embedding",
      model: "demo/embed",
      kind: "embedding",
      rerank: { model: "demo/rerank" },
      persist: false,
    },
  ]);
  const root = gw.baseUrl.replace(/\/v1$/, "");
  try {
    // Both engines are loading: the reranker is known (listed loading), never a 404.
    const rerank = await fetch(`${gw.baseUrl}/rerank`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo/rerank", query: "q", documents: ["a", "b"] }),
    });
    assertEquals(rerank.status, 503);
    assertEquals((await rerank.json()).error.code, "model_loading");
    assert(Number(rerank.headers.get("retry-after")) >= 1);
    const listed = await (await fetch(`${gw.baseUrl}/models`)).json();
    const reranker = listed.data.find((m: { id: string }) => m.id === "demo/rerank");
    assertEquals([reranker?.status, reranker?.kind], ["loading", "rerank"]);

    const early = await fetch(`${root}/health/ready`);
    assertEquals(early.status, 503);
    const earlyBody = await early.json();
    assertEquals(earlyBody.error.code, "not_ready");
    assert(earlyBody.loading.includes("embedding"), JSON.stringify(earlyBody));

    const manager = gw.gateway.manager!;
    await manager.whenReady("chat", { timeoutMs: 120_000 });
    await manager.whenReady("embedding", { timeoutMs: 120_000 });
    await gw.gateway.checker.checkAll();
    const deadline = Date.now() + 10_000;
    let ready = await fetch(`${root}/health/ready`);
    while (ready.status !== 200 && Date.now() < deadline) {
      await ready.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
      ready = await fetch(`${root}/health/ready`);
    }
    assertEquals(ready.status, 200);
    await ready.body?.cancel();

    // One more engine started while the chat engine serves: not ready until it has loaded too.
    await manager.startEngine({
      id: "late",
      model: "demo/embed",
      kind: "embedding",
      reuse: false,
      persist: false,
    });
    const late = await fetch(`${root}/health/ready`);
    assertEquals(late.status, 503);
    assertEquals((await late.json()).loading, ["late"]);
    const ok = await fetch(`${gw.baseUrl}/rerank`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo/rerank", query: "q", documents: ["a", "b"] }),
    });
    assertEquals(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    await gw.stop();
  }
});
