// Prompts scored while others generate (legacy completions' echo + logprobs): the scoring calls go
// one at a time, each no longer than a prefill chunk, between the running sequences' steps, and
// leave the running sequences as much of the model's time as they take.
import { assert, assertEquals } from "../../_assert.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import { ChatEngine } from "../../../src/engine/chat/chat_engine.ts";
import type { ModelSession } from "../../../src/engine/onnx_session.ts";
import type { SchedulerOptions } from "../../../src/engine/chat/decode_scheduler.ts";
import type { PromptTokenLogprob } from "../../../src/core/inference_types.ts";
import { wrappedSession } from "../../_helpers/wrapped_session.ts";
import { sleep } from "../../../src/core/sleep.ts";

const PREFILL_CHUNK = 16;
const PROMPTS = [0, 1, 2].map((k) => ({
  prompt: Array.from({ length: 30 }, (_, i) => `word${(i * 7 + k) % 23} and more`).join(" "),
}));

// The session, with every scored call counted: how many were in flight at once, how wide each was.
// Each scored call lasts at least `slowMs`, and holds the model as a real one does: runs wait.
function watched(session: ModelSession, slowMs = 0) {
  const seen = { inFlight: 0, mostInFlight: 0, widths: [] as number[] };
  let held: Promise<unknown> = Promise.resolve();
  const spy = wrappedSession(session, {
    run: async (feeds) => {
      await held;
      return await session.run(feeds);
    },
    runScored: (feeds, scoring) => {
      seen.mostInFlight = Math.max(seen.mostInFlight, ++seen.inFlight);
      seen.widths.push(feeds.input_ids.dims[1]);
      const call = Promise.all([session.runScored!(feeds, scoring), sleep(slowMs)])
        .then(([run]) => run)
        .finally(() => seen.inFlight--);
      held = call.catch(() => {});
      return call;
    },
  });
  return { spy, seen };
}

async function engineOn(
  session: ModelSession,
  model: Awaited<ReturnType<typeof loadModel>>,
  scheduler: Partial<SchedulerOptions> = {},
) {
  return await ChatEngine.create({ ...model, session }, {
    id: "demo/chat",
    scheduler: { prefillChunk: PREFILL_CHUNK, ...scheduler },
  });
}

const logprobsOf = (scored: PromptTokenLogprob[][]) => scored.map((p) => p.map((t) => t.logprob));

Deno.test("ChatEngine scores prompts one model call at a time, each at most a prefill chunk, with the same answer alone as while a sequence decodes", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const { spy, seen } = watched(model.session);
  const engine = await engineOn(spy, model);
  try {
    const alone = await engine.promptLogprobs(PROMPTS, { topLogprobs: 2 });
    assert(seen.widths.length > PROMPTS.length, `${seen.widths}`);
    assert(seen.widths.every((w) => w <= PREFILL_CHUNK), `${seen.widths}`);
    seen.widths = [];

    // A generation that lasts until the scoring is done (then it is cancelled).
    const stop = new AbortController();
    const room = engine.info.contextLength - 16;
    const stream = await engine.generate(
      { prompt: "Once upon a time" },
      { maxTokens: room, minTokens: room, temperature: 0 },
      stop.signal,
    );
    const events = stream[Symbol.asyncIterator]();
    await events.next(); // decoding now
    let decoding = true;
    const finished = (async () => {
      try {
        while (!(await events.next()).done) { /* drain */ }
      } catch { /* cancelled */ }
      decoding = false;
    })();
    const together = await Promise.all(
      PROMPTS.map(async (p) => (await engine.promptLogprobs([p], { topLogprobs: 2 }))[0]),
    );
    assert(decoding, "the generation lasted as long as the scoring");
    stop.abort();
    await finished;

    assertEquals(seen.mostInFlight, 1);
    assert(seen.widths.length > PROMPTS.length, `${seen.widths}`);
    assert(seen.widths.every((w) => w <= PREFILL_CHUNK), `${seen.widths}`);
    // Chunked differently, the same log-probabilities (to float rounding of other chunk shapes).
    const [a, b] = [logprobsOf(alone), logprobsOf(together)];
    a.forEach((prompt, i) =>
      prompt.forEach((lp, j) => assert(lp === b[i][j] || Math.abs(lp! - b[i][j]!) < 1e-3))
    );
  } finally {
    await engine.dispose();
  }
});

Deno.test("ChatEngine runs a short chat between two scoring calls, not one scoring call per token", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  // Slow scoring calls: the chat gets the model for as long as one took after it. Its steps go
  // through run(), which waits while a scoring call holds the model.
  const { spy, seen } = watched(model.session, 400);
  const engine = await engineOn(spy, model, { decodeInWorker: false });
  try {
    const scoring = engine.promptLogprobs([PROMPTS[0]], { topLogprobs: 2 });
    while (seen.widths.length === 0) await sleep(5);
    const before = seen.widths.length;
    const stream = await engine.generate(
      { messages: [{ role: "user", content: "Say hello." }] },
      { maxTokens: 4, minTokens: 4, temperature: 0 },
    );
    for await (const _ of stream) { /* drain */ }
    // The call in flight when the chat came, and at most the next (its turn may come first).
    const during = seen.widths.length - before;
    assert(during <= 1, `${during} scoring calls started while the chat ran`);
    await scoring;
  } finally {
    await engine.dispose();
  }
});
