// /tokenize and /detokenize answers of megabytes are written a slice at a time, as the other big
// answers are (a 600,000-token answer with its token strings, made with Response.json in one go,
// held the engine's thread ~0.3 s).
import { assert, assertEquals } from "../_assert.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";

const TOKENS = Array.from({ length: 300_000 }, (_, i) => i % 1000);

function tokenizingEngine(): FakeEngine {
  const engine = new FakeEngine({ id: "fake/chat", kind: "chat" });
  return Object.assign(engine, {
    tokenize: () => Promise.resolve({ tokens: TOKENS, tokenStrs: TOKENS.map((t) => `t${t}`) }),
    detokenize: (ids: number[]) => Promise.resolve(ids.map((t) => `t${t}`).join(" ")),
  });
}

async function chunksOf(res: Response): Promise<{ chunks: number; text: string }> {
  let chunks = 0;
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    chunks++;
    text += decoder.decode(chunk, { stream: true });
  }
  return { chunks, text };
}

Deno.test("/tokenize and /detokenize write a big answer in slices", async () => {
  const app = createEngineApp({ engines: [tokenizingEngine()] });
  const post = (path: string, body: unknown) =>
    app(
      new Request(`http://engine${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  const tokenized = await post("/tokenize", { prompt: "x", return_token_strs: true });
  assertEquals(tokenized.status, 200);
  const tokens = await chunksOf(tokenized);
  assert(tokens.chunks > 2, `${tokens.chunks} slices`);
  const body = JSON.parse(tokens.text);
  assertEquals([body.count, body.tokens.length, body.token_strs[7]], [300_000, 300_000, "t7"]);

  const detokenized = await post("/detokenize", { tokens: TOKENS });
  assertEquals(detokenized.status, 200);
  const text = await chunksOf(detokenized);
  assert(text.chunks > 1, `${text.chunks} slices`);
  assertEquals(JSON.parse(text.text).prompt.slice(0, 8), "t0 t1 t2");
});
