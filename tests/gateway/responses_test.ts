// The gateway owns the Responses store: a chain of responses works whichever engine answers each
// turn, and the store lives on in its folder across a gateway restart.
import OpenAI from "openai";
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { CHILD_HOME } from "./_child_home.ts";

setupLogger("error");

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const MODEL = "demo/chat";

Deno.test("gateway: previous_response_id works across engines and gateway restarts", async () => {
  const engines = [await demoEngineServer(MODEL), await demoEngineServer(MODEL)];
  const responsesDir = await Deno.makeTempDir();
  const backends = engines.map((e, i) => ({
    id: `e${i}`,
    baseUrl: e.baseUrl,
    kind: "llm" as const,
    models: [MODEL],
  }));
  let gateway = await startGateway({ logger: QUIET, backends, responsesDir });
  try {
    // Raw fetch: the answering backend's id is in a header.
    const create = async (body: Record<string, unknown>) => {
      const res = await fetch(`${gateway.baseUrl}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, max_output_tokens: 3, ...body }),
      });
      assertEquals(res.status, 200);
      return { backend: res.headers.get("x-svc-backend"), body: await res.json() };
    };
    const first = await create({ input: "My name is Ada." });
    // The engine that answered turn 1 leaves; turn 2 goes to the other one.
    const other = first.backend === "e0" ? "e1" : "e0";
    gateway.gateway.dispatcher.removeBackend(first.backend!);
    const alone = await create({ input: "What is my name?" });
    const second = await create({ input: "What is my name?", previous_response_id: first.body.id });
    assertEquals(second.backend, other);
    const carried = second.body.usage.input_tokens - alone.body.usage.input_tokens;
    assert(carried >= first.body.usage.output_tokens + 4, `${carried} tokens carried`);

    // A new gateway on the same folder still knows both responses.
    await gateway.stop();
    gateway = await startGateway({ logger: QUIET, backends, responsesDir });
    const third = await create({ input: "And again?", previous_response_id: second.body.id });
    assert(third.body.usage.input_tokens > second.body.usage.input_tokens);
    const client = new OpenAI({ baseURL: gateway.baseUrl, apiKey: "unused", maxRetries: 0 });
    assertEquals((await client.responses.retrieve(first.body.id)).id, first.body.id);
  } finally {
    await gateway.stop();
    for (const e of engines) await e.stop();
    await Deno.remove(responsesDir, { recursive: true });
  }
});

Deno.test("gateway: an engine it started does not serve the gateway's stored responses", async () => {
  // As `svc llm serve`: the gateway's store under the engines' SVC_HOME.
  const responsesDir = join(CHILD_HOME, "responses");
  const gateway = await startGateway({
    logger: QUIET,
    apiKey: "gateway-key",
    responsesDir,
    management: {
      home: CHILD_HOME,
      portCandidates: () => [],
      device: "cpu",
      offline: true,
      engineApiKey: "engine-key",
      supervisor: { stopTimeoutMs: 5000 },
    },
    engines: [{ id: "chat", model: MODEL, kind: "chat", persist: false }],
  });
  let id: string | undefined;
  try {
    const manager = gateway.gateway.manager!;
    await manager.whenReady("chat", { timeoutMs: 120_000 });
    const asGateway = { authorization: "Bearer gateway-key", "content-type": "application/json" };
    const res = await fetch(`${gateway.baseUrl}/responses`, {
      method: "POST",
      headers: asGateway,
      body: JSON.stringify({ model: MODEL, input: "My secret is 42.", max_output_tokens: 2 }),
    });
    assertEquals(res.status, 200);
    id = (await res.json()).id as string;
    assert((await Deno.stat(join(responsesDir, `${id}.json`))).isFile);
    // The engine's own key reaches the engine's /v1/responses, which knows nothing of it.
    const engine = `http://127.0.0.1:${manager.get("chat").port}/v1/responses/${id}`;
    const asEngine = { authorization: "Bearer engine-key" };
    for (const path of ["", "/input_items"]) {
      const read = await fetch(`${engine}${path}`, { headers: asEngine });
      assertEquals(read.status, 404, await read.text());
    }
    const removed = await fetch(engine, { method: "DELETE", headers: asEngine });
    assertEquals(removed.status, 404, await removed.text());
    assert((await Deno.stat(join(responsesDir, `${id}.json`))).isFile);
    const kept = await fetch(`${gateway.baseUrl}/responses/${id}`, { headers: asGateway });
    assertEquals(kept.status, 200, await kept.text());
  } finally {
    await gateway.stop();
    if (id) await Deno.remove(join(responsesDir, `${id}.json`)).catch(() => {});
  }
});

Deno.test("gateway: /v1/responses counts its input items against --max-messages first", async () => {
  const engine = await demoEngineServer(MODEL, undefined, { limits: { maxMessages: 3000 } });
  const backends = [{ id: "e0", baseUrl: engine.baseUrl, kind: "llm" as const, models: [MODEL] }];
  const input = Array.from({ length: 2049 }, () => ({ role: "user", content: "hi" }));
  const ask = (baseUrl: string) =>
    fetch(`${baseUrl}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, max_output_tokens: 1, input }),
    });
  let gateway = await startGateway({ logger: QUIET, backends });
  try {
    // The gateway's own 400 (the engine would name `messages`, and would take 3000).
    const refused = await ask(gateway.baseUrl);
    assertEquals(refused.status, 400);
    const { error } = await refused.json();
    assertEquals([error.param, error.code], ["input", "invalid_value"]);
    assert(error.message.startsWith("input items: 2049,"), error.message);
    assert(error.message.includes("--max-messages"), error.message);

    await gateway.stop();
    gateway = await startGateway({ logger: QUIET, backends, maxMessages: 3000 });
    // Passed on: the engine takes 2049 messages, and finds them too long for demo/chat.
    const passed = await ask(gateway.baseUrl);
    assertEquals(passed.status, 400);
    assertEquals((await passed.json()).error.code, "context_length_exceeded");
  } finally {
    await gateway.stop();
    await engine.stop();
  }
});
