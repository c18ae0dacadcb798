// Control-plane mode through the real gateway (src/gateway) over demo engine servers, and
// createForModel() starting real engine processes through the gateway's management API.
import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { ConfigurationError, ServiceError, ValidationError } from "../../src/core/errors.ts";
import { UnifiedInferenceClient } from "../../src/client/unified_inference_client.ts";
import type { EngineProgress } from "../../src/client/types.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { CHILD_HOME, closedPort } from "./_stand_in.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const GW_KEY = "gateway-key-1";

Deno.test("control-plane mode: chat, stream and embeddings go through the gateway", async (t) => {
  const [chat, emb] = await Promise.all([
    demoEngineServer("demo/chat"),
    demoEngineServer("demo/embed"),
  ]);
  let gw: GatewayServer | undefined;
  try {
    gw = await startGateway({
      logger: QUIET,
      apiKey: GW_KEY,
      backends: [
        { id: "chat-1", baseUrl: chat.baseUrl, kind: "llm", models: ["demo/chat"] },
        { id: "emb-1", baseUrl: emb.baseUrl, kind: "embedding", models: ["demo/embed"] },
      ],
    });
    const server = gw;
    const requests = () => server.gateway.dispatcher.snapshot().requests;

    await t.step("create({ controlPlaneUrl }) finds the models in the gateway's list", async () => {
      const client = await UnifiedInferenceClient.create({
        controlPlaneUrl: server.url, // a bare origin gets /v1
        apiKey: GW_KEY,
        env: {},
        envFile: null,
      });
      assertEquals(client.mode, "control_plane");
      assertEquals(client.endpoints.chat.baseUrl, server.baseUrl);
      const before = requests();
      const answer = await client.chat("Hello", { temperature: 0, maxTokens: 6 });
      assertEquals(answer.model, "demo/chat");
      assertEquals(client.endpoints.chat.model, "demo/chat");
      let streamed = "";
      for await (const d of client.chatStream("Hello", { temperature: 0, maxTokens: 6 })) {
        streamed += d.content;
      }
      assertEquals(streamed, answer.text);
      const vectors = await client.embed(["one", "two"]);
      assertEquals(vectors.length, 2);
      assertEquals(requests() - before, 3, "every call went through the dispatcher");
      const status = await client.status();
      assertEquals(status.controlPlaneUrl, server.baseUrl);
      assertEquals(status.chat.available, true);
      assertEquals(status.embedding.models, ["demo/embed"]);
    });

    await t.step("createWithControlPlane() takes the four strings of the spec", async () => {
      const client = UnifiedInferenceClient.createWithControlPlane(
        server.baseUrl,
        "demo/chat",
        server.baseUrl,
        "demo/embed",
        { env: { SVC_CHAT_API_KEY: GW_KEY }, envFile: null },
      );
      assertEquals(client.endpoints.chat.hasKey, true);
      assertEquals(client.mode, "control_plane");
      const before = requests();
      const direct = await client.chat("Hi", { maxTokens: 4, temperature: 0 });
      assertEquals(await client.generate("Hi", { maxTokens: 4, temperature: 0 }), direct.text);
      assertEquals((await client.embed("x")).length, 1);
      assertEquals(requests() - before, 3);
    });
  } finally {
    await gw?.stop();
    await Promise.all([chat.stop(), emb.stop()]);
  }
});

Deno.test("createForModel() starts a real engine through the management API, then reuses it", async () => {
  const gw = await startGateway({
    logger: QUIET,
    apiKey: GW_KEY,
    health: { intervalMs: 200 },
    management: {
      home: CHILD_HOME,
      portCandidates: () => [],
      device: "cpu",
      offline: true,
      supervisor: { restartDelayMs: 100, stopTimeoutMs: 5000 },
    },
  });
  try {
    const progress: EngineProgress[] = [];
    const client = await UnifiedInferenceClient.createForModel("demo/chat", {
      controlPlaneUrl: gw.baseUrl,
      apiKey: GW_KEY,
      env: {},
      envFile: null,
      readyTimeoutMs: 120_000,
      onProgress: (p) => progress.push(p),
    });
    assertEquals(client.mode, "control_plane");
    assertEquals(client.endpoints.chat.model, "demo/chat");
    assertEquals(progress[0].state, "starting");
    assertEquals(progress[0].reused, false);
    assertEquals(progress.at(-1)!.state, "ready");
    const answer = await client.chat("Hello", { maxTokens: 4, temperature: 0 });
    assertEquals(answer.model, "demo/chat");

    // The gateway is found by probing its port when no URL is given.
    const again: EngineProgress[] = [];
    const second = await UnifiedInferenceClient.createForModel("demo/chat", {
      gatewayPort: gw.served.addr.port,
      dtype: "q8", // what the engine loaded (the cpu default): the same engine serves it
      apiKey: GW_KEY,
      env: {},
      envFile: null,
      onProgress: (p) => again.push(p),
    });
    assertEquals(again.length, 1);
    assertEquals(again[0].reused, true);
    assertEquals(again[0].engineId, progress[0].engineId);
    assertEquals(second.endpoints.chat.baseUrl, `http://127.0.0.1:${gw.served.addr.port}/v1`);
    assertEquals((await second.chat("Hello", { maxTokens: 4, temperature: 0 })).text, answer.text);

    const failed = await assertRejects(
      () =>
        UnifiedInferenceClient.createForModel("nobody/no-such-model", {
          controlPlaneUrl: gw.baseUrl,
          apiKey: GW_KEY,
          kind: "chat",
          env: {},
          envFile: null,
          readyTimeoutMs: 60_000,
        }),
      ServiceError,
    );
    assertEquals(failed.code, "engine_failed");
    assertMatch(failed.message, /no-such-model/);
    // A dtype that does not exist fails before any request, naming the choices.
    await assertRejects(
      () =>
        UnifiedInferenceClient.createForModel("demo/chat", {
          controlPlaneUrl: gw.baseUrl,
          apiKey: GW_KEY,
          // deno-lint-ignore no-explicit-any
          dtype: "fp8" as any,
          env: {},
          envFile: null,
        }),
      ValidationError,
      "fp32, fp16, q8, int8, uint8, q4, q4f16, bnb4",
    );
    assert(gw.gateway.manager!.list().length >= 2);
  } finally {
    await gw.stop();
  }
});

Deno.test("createForModel() without a reachable gateway is a ConfigurationError", async () => {
  await assertRejects(
    () =>
      UnifiedInferenceClient.createForModel("demo/chat", {
        gatewayPort: closedPort(),
        env: {},
        envFile: null,
        probeTimeoutMs: 200,
      }),
    ConfigurationError,
    "svc llm serve",
  );
});
