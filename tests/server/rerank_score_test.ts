// Cohere's /v2/rerank and vLLM's score API (/score, /v1/score) on an engine server over a real
// socket, served by the same reranker as /v1/rerank (demo/rerank beside demo/embed). Scores are
// checked against the reranker engine itself.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { demoEngineServer, postJson } from "../_helpers/demo_server.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");

const QUERY = "where do pandas live";
const DOCS = ["Pandas live in the mountains of China.", "Stock prices fell today.", "bamboo"];

const close = (a: number, b: number) => Math.abs(a - b) < 1e-6;

Deno.test("engine server: /v2/rerank takes what Cohere's v2 SDK sends and answers as /v1/rerank does", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    // Cohere's v2 SDK sends model, query, documents (strings) and top_n when set.
    const cohere = { model: "demo/rerank", query: QUERY, documents: DOCS, top_n: 2 };
    const v2 = await postJson(server, "/v2/rerank", cohere);
    assertEquals(v2.status, 200, JSON.stringify(v2.body));
    const v1 = await postJson(server, "/v1/rerank", cohere);
    assertMatch(v2.body.id, /^rerank-/);
    assertEquals(v2.body.model, "demo/rerank");
    assertEquals(v2.body.results, v1.body.results);
    assertEquals(v2.body.results.length, 2);
    assertEquals(v2.body.usage, v1.body.usage);
    // Without model, as vLLM takes it where one reranker is served; return_documents false.
    const bare = await postJson(server, "/v2/rerank", {
      query: QUERY,
      documents: DOCS,
      return_documents: false,
    });
    assertEquals(bare.status, 200, JSON.stringify(bare.body));
    assertEquals(bare.body.results[0].document, undefined);
    // Cohere's v1-era fields that nothing here does are 400s naming them.
    for (const field of ["rank_fields", "max_chunks_per_doc"]) {
      const value = field === "rank_fields" ? ["text"] : 4;
      const refused = await postJson(server, "/v2/rerank", { ...cohere, [field]: value });
      assertEquals(refused.status, 400, field);
      assertEquals(refused.body.error.param, field);
    }
  } finally {
    await server.stop();
  }
});

Deno.test("engine server: /score and /v1/score score text_1 against text_2 pairs 1:1, 1:N and N:N", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    const expected = await server.reranker!.rerank(QUERY, DOCS);
    // 1:N: one score per text_2, in request order (not sorted).
    const oneToMany = await postJson(server, "/score", {
      model: "demo/rerank",
      text_1: QUERY,
      text_2: DOCS,
    });
    assertEquals(oneToMany.status, 200, JSON.stringify(oneToMany.body));
    const body = oneToMany.body;
    assertMatch(body.id, /^score-/);
    assertEquals([body.object, body.model], ["list", "demo/rerank"]);
    assert(Number.isInteger(body.created));
    assertEquals(body.data.map((d: { index: number }) => d.index), [0, 1, 2]);
    for (const d of body.data) {
      assertEquals(d.object, "score");
      assert(close(d.score, expected.scores[d.index]), `pair ${d.index}`);
    }
    assertEquals(body.usage, {
      prompt_tokens: expected.promptTokens,
      total_tokens: expected.promptTokens,
      completion_tokens: 0,
    });
    // 1:1 with strings, under /v1 and without model; a one-element text_1 list pairs 1:N.
    const single = await postJson(server, "/v1/score", { text_1: QUERY, text_2: DOCS[1] });
    assertEquals(single.status, 200, JSON.stringify(single.body));
    assertEquals(single.body.data.length, 1);
    assert(close(single.body.data[0].score, expected.scores[1]));
    const listed = await postJson(server, "/v1/score", { text_1: [QUERY], text_2: DOCS });
    assertEquals(
      listed.body.data.map((d: { score: number }) => d.score),
      body.data.map((
        d: { score: number },
      ) => d.score),
    );
    // N:N pairs position by position.
    const other = "stock market news";
    const pairwise = await postJson(server, "/score", {
      text_1: [QUERY, other, QUERY],
      text_2: [DOCS[0], DOCS[1], DOCS[2]],
    });
    assertEquals(pairwise.status, 200, JSON.stringify(pairwise.body));
    const otherScore = (await server.reranker!.rerank(other, [DOCS[1]])).scores[0];
    const scores = pairwise.body.data.map((d: { score: number }) => d.score);
    assert(close(scores[0], expected.scores[0]) && close(scores[2], expected.scores[2]));
    assert(close(scores[1], otherScore));
    // Lists of other lengths, an empty list, and a pair too long for the model: 400s naming them.
    const mismatch = await postJson(server, "/score", { text_1: [QUERY, other], text_2: DOCS });
    assertEquals([mismatch.status, mismatch.body.error.param], [400, "text_2"]);
    const empty = await postJson(server, "/score", { text_1: QUERY, text_2: [] });
    assertEquals([empty.status, empty.body.error.param], [400, "text_2"]);
    const long = Array(3000).fill("bamboo").join(" ");
    const tooLong = await postJson(server, "/score", { text_1: QUERY, text_2: ["short", long] });
    assertEquals([tooLong.status, tooLong.body.error.param], [400, "text_2.1"]);
    assertMatch(tooLong.body.error.message, /text_2\.1/);
    const cut = await postJson(server, "/score", { text_1: QUERY, text_2: long, truncate: true });
    assertEquals(cut.status, 200, JSON.stringify(cut.body));
    const blank = await postJson(server, "/score", { text_1: " ", text_2: "x" });
    assertEquals([blank.status, blank.body.error.param], [400, "text_1"]);
  } finally {
    await server.stop();
  }
  // No reranker here: a 400 naming model.
  const embed = await demoEngineServer("demo/embed");
  try {
    const none = await postJson(embed, "/score", { text_1: "a", text_2: "b" });
    assertEquals([none.status, none.body.error.param], [400, "model"]);
  } finally {
    await embed.stop();
  }
});

Deno.test("engine server: /score takes vLLM's other side names, use_activation and truncate_prompt_tokens", async () => {
  const server = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  try {
    const scoresOf = (body: { data: { score: number }[] }) => body.data.map((d) => d.score);
    const reference = await postJson(server, "/score", { text_1: QUERY, text_2: DOCS });
    for (
      const [one, two] of [["queries", "documents"], ["queries", "items"], ["data_1", "data_2"]]
    ) {
      const named = await postJson(server, "/score", { [one]: QUERY, [two]: DOCS });
      assertEquals(named.status, 200, JSON.stringify(named.body));
      assertEquals(scoresOf(named.body), scoresOf(reference.body), `${one}/${two}`);
    }
    // Errors name the sides as the request named them.
    const mismatch = await postJson(server, "/score", { queries: [QUERY, "x"], documents: DOCS });
    assertEquals([mismatch.status, mismatch.body.error.param], [400, "documents"]);
    assertMatch(mismatch.body.error.message, /queries has 2 texts and documents 3/);
    const blank = await postJson(server, "/score", { queries: [" ", "x"], documents: ["a", "b"] });
    assertEquals([blank.status, blank.body.error.param], [400, "queries.0"]);
    // Two namings at once, half a pair, or none: a 400 naming the odd field out.
    const mixed = await postJson(server, "/score", {
      queries: QUERY,
      documents: DOCS,
      text_2: DOCS,
    });
    assertEquals([mixed.status, mixed.body.error.param], [400, "text_2"]);
    const half = await postJson(server, "/score", { queries: QUERY, text_2: DOCS });
    assertEquals([half.status, half.body.error.param], [400, "queries"]);
    const none = await postJson(server, "/score", { model: "demo/rerank" });
    assertEquals([none.status, none.body.error.param], [400, "queries"]);
    // use_activation false: the model's logits, as rerank's raw_scores gives them.
    const raw = await server.reranker!.rerank(QUERY, DOCS, { rawScores: true });
    const logits = await postJson(server, "/score", {
      queries: QUERY,
      documents: DOCS,
      use_activation: false,
    });
    assertEquals(logits.status, 200, JSON.stringify(logits.body));
    scoresOf(logits.body).forEach((s: number, i: number) =>
      assert(close(s, raw.scores[i]), `${i}`)
    );
    const rerankRaw = await postJson(server, "/v1/rerank", {
      query: QUERY,
      documents: DOCS,
      use_activation: false,
    });
    assertEquals(rerankRaw.body.results[0].relevance_score, Math.max(...raw.scores));
    const disagree = await postJson(server, "/v1/rerank", {
      query: QUERY,
      documents: DOCS,
      raw_scores: true,
      use_activation: true,
    });
    assertEquals([disagree.status, disagree.body.error.param], [400, "use_activation"]);
    // truncate_prompt_tokens: every pair cut to that many tokens from the document's end; -1 is
    // the model's maximum, as truncate: true is.
    const long = Array(3000).fill("bamboo").join(" ");
    const cut = await postJson(server, "/score", {
      queries: QUERY,
      documents: [long, long + " x"],
      truncate_prompt_tokens: 32,
    });
    assertEquals(cut.status, 200, JSON.stringify(cut.body));
    assertEquals(cut.body.usage.prompt_tokens, 64);
    const [a, b] = scoresOf(cut.body);
    assert(close(a, b), "the cut ends of two long documents are the same text");
    const toMax = await postJson(server, "/score", {
      queries: QUERY,
      documents: long,
      truncate_prompt_tokens: -1,
    });
    const truncated = await postJson(server, "/score", {
      queries: QUERY,
      documents: long,
      truncate: true,
    });
    assertEquals(scoresOf(toMax.body), scoresOf(truncated.body));
    const left = await postJson(server, "/v1/rerank", {
      query: QUERY,
      documents: [long],
      truncate_prompt_tokens: 32,
      truncation_side: "left",
    });
    assertEquals([left.status, left.body.error.param], [400, "truncation_side"]);
  } finally {
    await server.stop();
  }
});
