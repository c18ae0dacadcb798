// `model` left out of /v1/embeddings, /v1/chat/completions and /v1/completions on an engine
// server, over real sockets: vLLM makes it optional everywhere and answers with its served model.
// Here the engine server picks its one model of the endpoint's kind, or answers the 400
// missing_required_parameter naming `model` when it serves none.
import { assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoEngineServer, postJson } from "../_helpers/demo_server.ts";

setupLogger("error");

Deno.test("engine server: /v1/embeddings defaults to the one embedding model when model is left out", async () => {
  // demo/rerank is served beside demo/embed: it is no embedding model, so there is one to pick.
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    const input = ["hello world", "pandas"];
    const named = await postJson(server, "/v1/embeddings", { model: "demo/embed", input });
    const unnamed = await postJson(server, "/v1/embeddings", { input });
    assertEquals(unnamed.status, 200, JSON.stringify(unnamed.body));
    assertEquals(unnamed.body.model, "demo/embed");
    assertEquals(unnamed.body.data, named.body.data);
    assertEquals(unnamed.body.usage, named.body.usage);
    const nulled = await postJson(server, "/v1/embeddings", { model: null, input: "x" });
    assertEquals(nulled.status, 200, JSON.stringify(nulled.body));
    // An empty model is still refused.
    const empty = await postJson(server, "/v1/embeddings", { model: "", input: "x" });
    assertEquals(empty.status, 400);
    assertEquals(empty.body.error.param, "model");
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: /v1/chat/completions and /v1/completions default to the one chat model; embeddings without model on a chat server is a 400 naming model", async () => {
  const server = await demoEngineServer("demo/chat");
  try {
    const messages = [{ role: "user", content: "hi" }];
    const sampling = { max_tokens: 4, temperature: 0 };
    const chatNamed = await postJson(server, "/v1/chat/completions", {
      model: "demo/chat",
      messages,
      ...sampling,
    });
    const chat = await postJson(server, "/v1/chat/completions", { messages, ...sampling });
    assertEquals(chat.status, 200, JSON.stringify(chat.body));
    assertEquals(chat.body.model, "demo/chat");
    assertEquals(chat.body.choices[0].message, chatNamed.body.choices[0].message);
    const legacy = await postJson(server, "/v1/completions", { prompt: "Hello", ...sampling });
    assertEquals(legacy.status, 200, JSON.stringify(legacy.body));
    assertEquals(legacy.body.model, "demo/chat");
    const legacyNamed = await postJson(server, "/v1/completions", {
      model: "demo/chat",
      prompt: "Hello",
      ...sampling,
    });
    assertEquals(legacy.body.choices[0].text, legacyNamed.body.choices[0].text);
    // Streamed too.
    const res = await fetch(`${server.served.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "Hello", stream: true, ...sampling }),
    });
    assertEquals(res.status, 200);
    assertMatch(await res.text(), /"model":"demo\/chat"[\s\S]*data: \[DONE\]/);
    // No embedding model here: a 400 that says so and names model.
    const none = await postJson(server, "/v1/embeddings", { input: "x" });
    assertEquals(none.status, 400, JSON.stringify(none.body));
    assertEquals(none.body.error.param, "model");
    assertEquals(none.body.error.code, "missing_required_parameter");
    assertMatch(none.body.error.message, /no embedding model/);
  } finally {
    await server.stop();
  }
  // An embedding server has no chat model to default to.
  const embed = await demoEngineServer("demo/embed");
  try {
    const none = await postJson(embed, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(none.status, 400, JSON.stringify(none.body));
    assertEquals(none.body.error.param, "model");
    assertMatch(none.body.error.message, /no chat model/);
  } finally {
    await embed.stop();
  }
});
