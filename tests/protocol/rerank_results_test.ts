import { assertEquals } from "../_assert.ts";
import { rankedResultsOf } from "../../src/protocol/rerank_results.ts";

const DOCS = ["a", "b", "c"];

Deno.test("rankedResultsOf: results best first, with the call's texts", () => {
  const answer = {
    results: [{ index: 2, relevance_score: 0.1 }, { index: 0, relevance_score: 0.9 }],
  };
  assertEquals(rankedResultsOf(answer, DOCS), [
    { index: 0, score: 0.9, document: "a" },
    { index: 2, score: 0.1, document: "c" },
  ]);
  assertEquals(rankedResultsOf({ results: [] }, DOCS), []);
});

Deno.test("rankedResultsOf: null for a missing list or any result that names no document", () => {
  for (
    const answer of [
      null,
      {},
      { results: "x" },
      { results: [{ index: 3, relevance_score: 1 }] },
      { results: [{ index: -1, relevance_score: 1 }] },
      { results: [{ index: 0.5, relevance_score: 1 }] },
      { results: [{ index: 0, relevance_score: "1" }] },
      { results: [{ index: 0, relevance_score: 1 }, null] },
    ]
  ) assertEquals(rankedResultsOf(answer, DOCS), null, JSON.stringify(answer));
});
