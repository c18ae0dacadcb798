// /v1/rerank, /tokenize and /detokenize on an engine server over a real socket: an embedding model
// with demo/rerank beside it (as `svc llm run --with-rerank` serves them), and a chat model for the
// chat-template path. Scores are checked against the reranker engine itself (whose logits the
// engine oracle test checks against transformers.js).
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { demoEngineServer, postJson } from "../_helpers/demo_server.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");

const QUERY = "where do pandas live";
const DOCS = ["Pandas live in the mountains of China.", "Stock prices fell today.", "bamboo"];

Deno.test("engine server: /v1/rerank and /rerank rank documents by the reranker's scores", async () => {
  const server = await demoEngineServer("demo/embed", undefined, {
    withReranker: true,
    limits: { maxRerankDocuments: 3 },
  });
  try {
    const expected = await server.reranker!.rerank(QUERY, DOCS);
    const { status, body } = await postJson(server, "/v1/rerank", {
      model: "demo/rerank",
      query: QUERY,
      documents: [DOCS[0], { text: DOCS[1] }, DOCS[2]],
    });
    assertEquals(status, 200);
    assertMatch(body.id, /^rerank-/);
    assertEquals(body.model, "demo/rerank");
    assertEquals(body.usage.total_tokens, expected.promptTokens);
    const order = [0, 1, 2].sort((a, b) => expected.scores[b] - expected.scores[a]);
    assertEquals(body.results.map((r: { index: number }) => r.index), order);
    for (const r of body.results) {
      assert(Math.abs(r.relevance_score - expected.scores[r.index]) < 1e-6);
      assert(r.relevance_score > 0 && r.relevance_score < 1, "sigmoid scores lie in (0, 1)");
      assertEquals(r.document, { text: DOCS[r.index] });
    }
    // TEI/Jina clients call /rerank; top_n, return_documents and raw_scores.
    const top = await postJson(server, "/rerank", {
      model: "demo/rerank",
      query: QUERY,
      documents: DOCS,
      top_n: 1,
      return_documents: false,
      raw_scores: true,
    });
    assertEquals(top.status, 200);
    assertEquals(top.body.results.length, 1);
    assertEquals(top.body.results[0].index, order[0]);
    assertEquals(top.body.results[0].document, undefined);
    const logit = Math.log(expected.scores[order[0]] / (1 - expected.scores[order[0]]));
    assert(Math.abs(top.body.results[0].relevance_score - logit) < 1e-4);
    // Both models are listed, each with its kind.
    const models = await (await fetch(`${server.baseUrl}/models`)).json();
    assertEquals(
      models.data.map((m: { id: string; kind: string }) => [m.id, m.kind]),
      [["demo/embed", "embedding"], ["demo/rerank", "rerank"]],
    );

    // Errors: each a 400/404 with an OpenAI-style body naming the field.
    const bad = async (body: unknown, status: number, param: string | null, text: RegExp) => {
      const res = await postJson(server, "/v1/rerank", body);
      assertEquals(res.status, status, JSON.stringify(res.body));
      assertEquals(res.body.error.param, param);
      assertMatch(res.body.error.message, text);
    };
    await bad({ model: "demo/rerank", query: QUERY, documents: [] }, 400, "documents", /empty/);
    await bad(
      { model: "demo/rerank", query: QUERY, documents: ["a", "b", "c", "d"] },
      400,
      "documents",
      /documents: 4, more than this server's limit of 3 .*--max-rerank-documents/,
    );
    await bad({ model: "nope", query: QUERY, documents: ["a"] }, 404, "model", /does not exist/);
    await bad(
      { model: "demo/embed", query: QUERY, documents: ["a"] },
      400,
      "model",
      /is an embedding model .*pick a reranker/,
    );
    await bad(
      { model: "demo/rerank", query: QUERY, documents: ["a"], rank_fields: ["x"] },
      400,
      "rank_fields",
      /rank_fields/,
    );
    await bad({ model: "demo/rerank", query: "", documents: ["a"] }, 400, "query", /empty/);
    // And the reranker is no embedding model.
    const embed = await postJson(server, "/v1/embeddings", { model: "demo/rerank", input: "x" });
    assertEquals(embed.status, 400);
    assertEquals(embed.body.error.code, "invalid_model_kind");
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: /tokenize and /detokenize use an embedding model's tokenizer", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    for (const model of ["demo/embed", "demo/rerank"]) {
      const { status, body } = await postJson(server, "/tokenize", {
        model,
        prompt: "Hello world",
        return_token_strs: true,
      });
      assertEquals(status, 200);
      assertEquals(body.count, body.tokens.length);
      assertEquals(body.token_strs.length, body.count);
      assertEquals([body.token_strs[0], body.token_strs.at(-1)], ["[CLS]", "[SEP]"]);
      assert(body.max_model_len >= 256, JSON.stringify(body));
      const bare = await postJson(server, "/v1/tokenize", {
        model,
        prompt: "Hello world",
        add_special_tokens: false,
      });
      assertEquals(bare.body.tokens, body.tokens.slice(1, -1));
      assertEquals(bare.body.token_strs, undefined);
      const back = await postJson(server, "/detokenize", { model, tokens: bare.body.tokens });
      assertEquals(back, { status: 200, body: { prompt: "hello world" } });
    }
    const oov = await postJson(server, "/detokenize", { model: "demo/embed", tokens: [5, 999999] });
    assertEquals(oov.status, 400);
    assertEquals(oov.body.error.param, "tokens");
    assertMatch(oov.body.error.message, /999999 at position 1/);
    const noTemplate = await postJson(server, "/tokenize", {
      model: "demo/embed",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(noTemplate.status, 400);
    assertMatch(noTemplate.body.error.message, /no chat template/);
    const both = await postJson(server, "/tokenize", {
      model: "demo/embed",
      prompt: "x",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(both.status, 400);
    const unknown = await postJson(server, "/tokenize", { model: "nope", prompt: "x" });
    assertEquals(unknown.status, 404);
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: /tokenize renders messages with a chat model's template", async () => {
  const server = await demoEngineServer("demo/chat");
  try {
    const messages = [{ role: "user", content: "What is 2+2?" }];
    const withPrompt = await postJson(server, "/tokenize", { model: "demo/chat", messages });
    assertEquals(withPrompt.status, 200);
    // The chat endpoint counts the same prompt tokens.
    const chat = await postJson(server, "/v1/chat/completions", {
      model: "demo/chat",
      messages,
      max_tokens: 1,
    });
    assertEquals(withPrompt.body.count, chat.body.usage.prompt_tokens);
    const bare = await postJson(server, "/tokenize", {
      model: "demo/chat",
      messages,
      add_generation_prompt: false,
      return_token_strs: true,
    });
    assert(bare.body.count < withPrompt.body.count, "the generation prompt adds tokens");
    assertEquals(withPrompt.body.tokens.slice(0, bare.body.count), bare.body.tokens);
    const text = await postJson(server, "/detokenize", {
      model: "demo/chat",
      tokens: withPrompt.body.tokens,
    });
    assertMatch(text.body.prompt, /What is 2\+2\?.*assistant/s);
    const tools = await postJson(server, "/tokenize", {
      model: "demo/chat",
      messages,
      tools: [{ type: "function", function: { name: "add", parameters: { type: "object" } } }],
    });
    assert(tools.body.count > withPrompt.body.count, "the tools are in the rendered prompt");
    const misplaced = await postJson(server, "/tokenize", {
      model: "demo/chat",
      prompt: "x",
      add_generation_prompt: true,
    });
    assertEquals(misplaced.status, 400);
    assertEquals(misplaced.body.error.param, "add_generation_prompt");
    // continue_final_message counts what chat prefills: the last assistant message left open.
    const open = [...messages, { role: "assistant", content: "It is" }];
    const continued = await postJson(server, "/tokenize", {
      model: "demo/chat",
      messages: open,
      continue_final_message: true,
      add_generation_prompt: false,
    });
    const continuedChat = await postJson(server, "/v1/chat/completions", {
      model: "demo/chat",
      messages: open,
      continue_final_message: true,
      add_generation_prompt: false,
      max_tokens: 1,
    });
    assertEquals(continued.status, 200);
    assertEquals(continued.body.count, continuedChat.body.usage.prompt_tokens);
    const ended = await postJson(server, "/tokenize", { model: "demo/chat", messages: open });
    assert(continued.body.count < ended.body.count, "the open message has no end of turn");
    const both = await postJson(server, "/tokenize", {
      model: "demo/chat",
      messages: open,
      continue_final_message: true,
      add_generation_prompt: true,
    });
    assertEquals(both.status, 400);
    assertEquals(both.body.error.param, "continue_final_message");
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: /v1/rerank, /tokenize and /detokenize default to the one model that fits when model is left out", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    // One reranker served (beside an embedding model): rerank uses it, as vLLM uses its model.
    const expected = await server.reranker!.rerank(QUERY, DOCS);
    const ranked = await postJson(server, "/v1/rerank", { query: QUERY, documents: DOCS });
    assertEquals(ranked.status, 200, JSON.stringify(ranked.body));
    assertEquals(ranked.body.model, "demo/rerank");
    const best = ranked.body.results[0];
    assert(Math.abs(best.relevance_score - Math.max(...expected.scores)) < 1e-6);
    const nulled = await postJson(server, "/rerank", {
      model: null,
      query: QUERY,
      documents: DOCS,
    });
    assertEquals(nulled.status, 200, JSON.stringify(nulled.body));
    // Two models tokenize here: a 400 naming model and both choices.
    for (
      const [path, body] of [["/tokenize", { prompt: "hi" }], ["/detokenize", { tokens: [5] }]]
    ) {
      const res = await postJson(server, path as string, body);
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals(res.body.error.param, "model");
      assertEquals(res.body.error.code, "missing_required_parameter");
      assertMatch(res.body.error.message, /demo\/embed, demo\/rerank/);
    }
    // An empty model is still refused.
    const empty = await postJson(server, "/v1/rerank", {
      model: "",
      query: QUERY,
      documents: DOCS,
    });
    assertEquals(empty.status, 400);
    assertEquals(empty.body.error.param, "model");
  } finally {
    await server.stop();
  }
  const chat = await demoEngineServer("demo/chat");
  try {
    const named = await postJson(chat, "/tokenize", { model: "demo/chat", prompt: "Hello world" });
    const unnamed = await postJson(chat, "/v1/tokenize", { prompt: "Hello world" });
    assertEquals(unnamed, named);
    const back = await postJson(chat, "/detokenize", { tokens: named.body.tokens });
    assertEquals(back.status, 200);
    assertMatch(back.body.prompt, /Hello world/);
    // No reranker here: rerank without model says there is none to default to.
    const none = await postJson(chat, "/v1/rerank", { query: QUERY, documents: DOCS });
    assertEquals(none.status, 400);
    assertEquals(none.body.error.param, "model");
    assertMatch(none.body.error.message, /no reranker/);
  } finally {
    await chat.stop();
  }
});
