// Attack: token ids outside the vocabulary, sent with good requests. On main each got a 502, failed
// the good requests batched with it, and five of them opened the gateway's circuit for everyone.
// Now the bad ones get a 400 naming the field before any batching, every good one gets its own
// correct vector, the circuit stays closed, and the engines' memory comes back to its baseline.
import { assert, assertEquals } from "../_assert.ts";
import { cosine } from "../_helpers/vectors.ts";
import { rssBytes, startServedStack, timeNormalChat } from "../_helpers/served_stack.ts";

const GOOD = Array.from({ length: 40 }, (_, i) => `good request ${i} ${"word ".repeat(i % 9)}`);
const BAD: { path: string; body: unknown; param: string }[] = [
  { path: "/embeddings", body: { model: "demo/embed", input: [999_999_999] }, param: "input.0" },
  {
    path: "/embeddings",
    body: { model: "demo/embed", input: [[1, 2], [7, 4096]] },
    param: "input.1",
  },
  { path: "/completions", body: { model: "demo/chat", prompt: [999_999_999] }, param: "prompt" },
];

// deno-lint-ignore no-explicit-any
type Json = any;

async function post(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, json: await res.json() };
}

async function embedEach(url: string): Promise<number[][]> {
  const answers = await Promise.all(
    GOOD.map((input) => post(url, "/embeddings", { model: "demo/embed", input })),
  );
  return answers.map(({ status, json }) => {
    assertEquals(status, 200, JSON.stringify(json));
    return json.data[0].embedding;
  });
}

Deno.test("out-of-vocabulary ids get 400s, fail no good request, leave the circuit closed", async () => {
  const stack = await startServedStack();
  try {
    const url = stack.state.gatewayUrl!;
    const pids = [stack.state.llmPid!, stack.state.embeddingPid!];
    // Reference vectors, one request at a time; then a warm burst, so memory is at its working size.
    const expected: number[][] = [];
    for (const input of GOOD) {
      const { json } = await post(url, "/embeddings", { model: "demo/embed", input });
      expected.push(json.data[0].embedding);
    }
    await embedEach(url);
    await timeNormalChat(url);
    const baseline = await Promise.all(pids.map(rssBytes));

    for (let round = 0; round < 3; round++) {
      const bad = Promise.all(
        Array.from({ length: 12 }, (_, i) => BAD[i % BAD.length]).map(async (b) => ({
          b,
          ...await post(url, b.path, b.body),
        })),
      );
      const vectors = await embedEach(url);
      vectors.forEach((v, i) => {
        const similarity = cosine(v, expected[i]);
        assert(similarity > 0.9999, `good request ${i} got another vector (cosine ${similarity})`);
      });
      for (const { b, status, json } of await bad) {
        assertEquals([status, json.error?.param], [400, b.param], JSON.stringify(json));
      }
    }

    const ready = await (await fetch(`${url.slice(0, -"/v1".length)}/health/ready`)).json();
    assertEquals(ready.backends.map((b: { circuit: string }) => b.circuit), ["closed", "closed"]);
    await embedEach(url);
    await timeNormalChat(url);
    const after = await Promise.all(pids.map(rssBytes));
    after.forEach((bytes, i) => {
      const growthMiB = (bytes - baseline[i]) / 2 ** 20;
      assert(growthMiB < 48, `engine ${pids[i]} grew ${growthMiB.toFixed(1)} MiB`);
    });
  } finally {
    await stack.stop();
  }
});
