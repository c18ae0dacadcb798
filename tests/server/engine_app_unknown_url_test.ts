// The 404 of an unknown URL lists the endpoints the engine server serves: those of its models'
// kinds, not a chat route on an embedding server. The routes of other kinds still answer, with
// the 400 that names the endpoint to use.
import { assert, assertEquals } from "../_assert.ts";
import { demoEngineServer, postJson } from "../_helpers/demo_server.ts";
import type { EngineServer } from "../../src/server/engine_server.ts";

const CHAT = ["POST /v1/chat/completions", "POST /v1/completions", "POST /v1/responses"];
const EMBEDDING = ["POST /v1/embeddings"];
const RERANK = ["POST /v1/rerank", "POST /rerank", "POST /v2/rerank", "POST /score"];
const EVERY_KIND = ["POST /tokenize", "GET /v1/models", "GET /health", "GET /metrics"];

async function listed(server: EngineServer): Promise<string> {
  const res = await fetch(`${server.served.url}/v1/nope`);
  assertEquals(res.status, 404);
  const body = await res.json();
  assertEquals(body.error.code, "unknown_url");
  return body.error.message.split("It serves: ")[1];
}

function assertLists(message: string, shown: string[], hidden: string[]): void {
  const endpoints = message.replace(/\.$/, "").split(", ");
  for (const e of [...shown, ...EVERY_KIND]) assert(endpoints.includes(e), `${e} in: ${message}`);
  for (const e of hidden) assert(!endpoints.includes(e), `${e} not in: ${message}`);
}

Deno.test("engine server 404: an embedding server lists embeddings, no chat or rerank route", async () => {
  const server = await demoEngineServer("demo/embed");
  try {
    assertLists(await listed(server), EMBEDDING, [...CHAT, ...RERANK]);
    // Unlisted, the chat route still says what to call instead.
    const chat = await postJson(server, "/v1/chat/completions", {
      model: "demo/embed",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(chat.status, 400);
    assertEquals(chat.body.error.code, "invalid_model_kind");
  } finally {
    await server.stop();
  }
});

Deno.test("engine server 404: a chat server with a reranker lists chat and rerank, no embeddings", async () => {
  const server = await demoEngineServer("demo/chat", undefined, { withReranker: true });
  try {
    assertLists(await listed(server), [...CHAT, ...RERANK], EMBEDDING);
  } finally {
    await server.stop();
  }
});

Deno.test("engine server 404: a reranker server lists rerank and score only", async () => {
  const server = await demoEngineServer("demo/rerank");
  try {
    assertLists(await listed(server), RERANK, [...CHAT, ...EMBEDDING]);
  } finally {
    await server.stop();
  }
});
