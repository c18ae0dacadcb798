// Every backend reads its own /v1/models once, when it first answers healthy: a Svc server's
// demo models are listed with random_weights and its rerankers as rerank, whether the backend was
// given in code, registered with explicit models or discovered — and the listing is not asked for
// again at every health round.
import { assert, assertEquals } from "../_assert.ts";
import { createGateway } from "../../src/gateway/gateway.ts";
import { MAX_FACT_TRIES } from "../../src/gateway/backend.ts";
import { until } from "./_fake_backend.ts";

const LOOPBACK: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 40000 };

// A Svc demo engine as far as the gateway asks: /health, and /v1/models with Svc's extensions.
function svcDemoServer(options: { listing?: "ok" | "hang" } = {}) {
  const counts = { health: 0, models: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/health") {
      counts.health++;
      return Response.json({ status: "ok" });
    }
    if (path === "/v1/models") {
      counts.models++;
      if (options.listing === "hang") {
        return new Promise<Response>((resolve) =>
          req.signal.addEventListener("abort", () => resolve(new Response(null)))
        );
      }
      return Response.json({
        object: "list",
        data: [
          { id: "demo/chat", object: "model", kind: "chat", random_weights: true },
          { id: "demo/embed", object: "model", kind: "embedding", random_weights: true },
          { id: "demo/rerank", object: "model", kind: "rerank", random_weights: true },
        ],
      });
    }
    return Response.json({ error: { message: "no", type: "x", param: null, code: null } }, {
      status: 404,
    });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/v1`,
    counts,
    close: () => server.shutdown(),
  };
}

type WireModel = { id: string; kind: string; random_weights?: boolean; status: string };

async function listed(handler: (req: Request, info: Deno.ServeHandlerInfo) => Promise<Response>) {
  const res = await handler(
    new Request("http://127.0.0.1:8000/v1/models"),
    { remoteAddr: LOOPBACK, completed: Promise.resolve() },
  );
  assertEquals(res.status, 200);
  const body = await res.json() as { data: WireModel[] };
  return new Map(body.data.map((m) => [m.id, m]));
}

Deno.test("gateway: backends given in code learn a Svc server's random_weights and rerankers from its /v1/models, once", async () => {
  const svc = svcDemoServer();
  const gw = await createGateway({
    health: { intervalMs: 10 },
    backends: [
      { id: "chat", baseUrl: svc.url, kind: "llm", models: ["demo/chat"] },
      { id: "emb", baseUrl: svc.url, kind: "embedding", models: ["demo/embed", "demo/rerank"] },
    ],
  });
  try {
    // Several health rounds: the listing is read once per backend, not once per round.
    await until(() => svc.counts.health >= 12, 5000);
    const models = await listed(gw.handler);
    assertEquals(models.get("demo/chat")?.random_weights, true);
    assertEquals(models.get("demo/chat")?.kind, "chat");
    assertEquals(models.get("demo/embed")?.kind, "embedding");
    assertEquals(models.get("demo/embed")?.random_weights, true);
    assertEquals(models.get("demo/rerank")?.kind, "rerank");
    assertEquals(models.get("demo/rerank")?.random_weights, true);
    assertEquals(svc.counts.models, 2, "one listing per backend");
  } finally {
    await gw.close();
    await svc.close();
  }
});

Deno.test("gateway: a backend registered with explicit models learns the facts of its listing too", async () => {
  const svc = svcDemoServer();
  const home = await Deno.makeTempDir();
  const gw = await createGateway({ management: { home } });
  try {
    await gw.manager!.registerRemote({
      id: "remote-emb",
      baseUrl: svc.url,
      kind: "embedding",
      models: ["demo/embed", "demo/rerank"],
    });
    const models = await listed(gw.handler);
    assertEquals(models.get("demo/rerank")?.kind, "rerank");
    assertEquals(models.get("demo/rerank")?.random_weights, true);
    assertEquals(models.get("demo/embed")?.kind, "embedding");
    assertEquals(svc.counts.models, 1);
    // The management view says so as well.
    const view = gw.manager!.get("remote-emb");
    assertEquals([view.rerankers, view.randomWeights], [["demo/rerank"], true]);
  } finally {
    await gw.close();
    await svc.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("gateway: a listing that never answers is asked for a bounded number of times", async () => {
  const svc = svcDemoServer({ listing: "hang" });
  const gw = await createGateway({
    health: { intervalMs: 10, timeoutMs: 50 },
    backends: [{ id: "chat", baseUrl: svc.url, kind: "llm", models: ["demo/chat"] }],
  });
  try {
    await until(() => svc.counts.health >= MAX_FACT_TRIES + 6, 5000);
    assertEquals(svc.counts.models, MAX_FACT_TRIES);
    const backend = gw.dispatcher.backend("chat")!;
    assertEquals(backend.health, "healthy", "a slow listing does not make it unhealthy");
    assert(backend.knowsModelFacts);
    assertEquals(backend.modelFacts, { rerankers: [], randomWeights: [] });
  } finally {
    await gw.close();
    await svc.close();
  }
});
