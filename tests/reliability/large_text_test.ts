// Issue 23, item 4: one request with megabytes of text (a chat prompt, /tokenize, embeddings,
// /detokenize of millions of ids) is tokenized in the tokenizer's worker, so the engine's thread
// goes on answering everyone else meanwhile (it used to stall them for 4-16 s).
import { assert, assertEquals } from "../_assert.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");

const BIG = "word ".repeat(1_400_000); // 7 MB, under the 8 MiB body limit

function post(baseUrl: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The slowest of the small requests sent while `big` runs, and the big request's answer. */
async function neighboursOf(
  big: Promise<Response>,
  small: () => Promise<Response>,
) {
  let slowest = 0;
  let done = false;
  const answer = big.finally(() => (done = true));
  let count = 0;
  while (!done) {
    const started = performance.now();
    const res = await small();
    await res.body?.cancel();
    assertEquals(res.status, 200);
    slowest = Math.max(slowest, performance.now() - started);
    count++;
  }
  return { slowest, count, answer: await answer };
}

Deno.test("megabytes of text in one request do not stall the engine's other requests", async (t) => {
  const chat = await demoEngineServer("demo/chat");
  const embed = await demoEngineServer("demo/embed");
  const rerank = await demoEngineServer("demo/rerank");
  const health = (server: { baseUrl: string }) => () =>
    fetch(`${server.baseUrl.replace(/\/v1$/, "")}/health`);
  try {
    const cases = [
      {
        name: "a chat prompt",
        server: chat,
        big: () =>
          post(chat.baseUrl, "/chat/completions", {
            model: "demo/chat",
            messages: [{ role: "user", content: BIG }],
          }),
        status: 400, // longer than the context, found once tokenized
      },
      {
        name: "/tokenize",
        server: chat,
        big: () => post(chat.baseUrl, "/tokenize", { model: "demo/chat", prompt: BIG }),
        status: 200,
      },
      {
        name: "/detokenize of 3 million ids",
        server: chat,
        big: () =>
          post(chat.baseUrl, "/detokenize", {
            model: "demo/chat",
            tokens: Array.from({ length: 3_000_000 }, (_, i) => i % 9),
          }),
        status: 200,
      },
      {
        name: "embeddings",
        server: embed,
        big: () =>
          post(embed.baseUrl, "/embeddings", { model: "demo/embed", input: [BIG], truncate: true }),
        status: 200,
      },
      {
        name: "embeddings of many small texts",
        server: embed,
        big: () =>
          post(embed.baseUrl, "/embeddings", {
            model: "demo/embed",
            input: Array.from({ length: 1500 }, () => BIG.slice(0, 4000)),
            truncate: true,
          }),
        status: 400, // more tokens than one request may embed, found once tokenized
      },
      {
        name: "rerank",
        server: rerank,
        big: () =>
          post(rerank.baseUrl, "/rerank", {
            model: "demo/rerank",
            query: "which?",
            documents: Array.from({ length: 100 }, () => BIG.slice(0, 70_000)),
            truncate: true,
          }),
        status: 200,
      },
    ];
    for (const c of cases) {
      await t.step(c.name, async () => {
        const started = performance.now();
        const { slowest, count, answer } = await neighboursOf(
          c.big(),
          health(c.server),
        );
        const took = performance.now() - started;
        assertEquals(answer.status, c.status, await answer.text());
        // The big request keeps a core busy for seconds; a request beside it must not wait for
        // that (generous for a loaded 2-core machine: it used to wait the whole time).
        assert(count >= 2, `only ${count} health checks in ${took.toFixed(0)} ms`);
        assert(
          slowest < Math.max(1000, took / 3),
          `a neighbour waited ${slowest.toFixed(0)} ms of ${took.toFixed(0)}`,
        );
      });
    }
  } finally {
    await chat.stop();
    await embed.stop();
    await rerank.stop();
  }
});
