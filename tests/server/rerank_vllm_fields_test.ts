// vLLM's /v1/rerank fields over a real socket (demo/rerank beside demo/embed): `top_n: 0` is
// every document (vLLM's default), and `user`, `priority` and `request_id` are accepted.
import { assertEquals } from "../_assert.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { setupLogger } from "../../src/core/logging.ts";
import type { EngineServer } from "../../src/server/engine_server.ts";

setupLogger("error");

const DOCS = ["Pandas live in the mountains of China.", "Stock prices fell today.", "bamboo"];

async function rerank(server: EngineServer, body: Record<string, unknown>) {
  const res = await fetch(`${server.served.url}/v1/rerank`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "demo/rerank", query: "where do pandas live", ...body }),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("rerank: top_n 0 answers every document and vLLM's user, priority and request_id are accepted", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    const all = await rerank(server, { documents: DOCS });
    assertEquals(all.status, 200);
    const zero = await rerank(server, {
      documents: DOCS,
      top_n: 0,
      user: "u-1",
      priority: 0,
      request_id: "req-1",
    });
    assertEquals(zero.status, 200);
    assertEquals(zero.body.results, all.body.results);
    assertEquals(zero.body.results.length, DOCS.length);
    // A negative top_n is still a 400 naming it.
    const negative = await rerank(server, { documents: DOCS, top_n: -1 });
    assertEquals([negative.status, negative.body.error.param], [400, "top_n"]);
  } finally {
    await server.stop();
  }
});
