import {
  assert,
  assertEquals,
  assertMatch,
  assertNotEquals,
  assertRejects,
} from "../../_assert.ts";
import { demoChatEngine, demoFolder } from "../../_helpers/demo_engines.ts";
import { ChatEngine, collect } from "../../../src/engine/chat/chat_engine.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import {
  CancelledError,
  ContextLengthError,
  RateLimitError,
  ValidationError,
} from "../../../src/core/errors.ts";
import type { GenerationEvent, SamplingParams } from "../../../src/core/inference_types.ts";
import { wrappedSession } from "../../_helpers/wrapped_session.ts";

const GREEDY: SamplingParams = { temperature: 0 };

async function run(engine: ChatEngine, prompt: string, params: SamplingParams) {
  return await collect(await engine.generate({ prompt }, params));
}

Deno.test("ChatEngine greedy decoding with the KV cache equals argmax of full forward passes", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const engine = await ChatEngine.create(model, { id: "demo/chat" });
  const prompt = "The quick brown fox";
  const got = await run(engine, prompt, { ...GREEDY, maxTokens: 12 });

  // Reference: no cache at all, the whole sequence again at every step.
  const ids = model.tokenizer.encode(prompt);
  const generated: number[] = [];
  const eos = model.tokenizer.eos_token_id;
  const cacheNames = model.session.inputNames.filter((n) => n.startsWith("past_key_values."));
  const heads = Number(model.config.num_key_value_heads);
  const headDim = Number(model.config.head_dim ?? 16);
  for (let step = 0; step < 12; step++) {
    const seq = [...ids, ...generated];
    const feeds: Record<string, { type: "int64" | "float32"; data: unknown; dims: number[] }> = {
      input_ids: { type: "int64", data: BigInt64Array.from(seq, BigInt), dims: [1, seq.length] },
      attention_mask: {
        type: "int64",
        data: new BigInt64Array(seq.length).fill(1n),
        dims: [1, seq.length],
      },
      position_ids: {
        type: "int64",
        data: BigInt64Array.from(seq, (_, i) => BigInt(i)),
        dims: [1, seq.length],
      },
      num_logits_to_keep: { type: "int64", data: BigInt64Array.of(1n), dims: [] },
    };
    for (const name of cacheNames) {
      feeds[name] = { type: "float32", data: new Float32Array(0), dims: [1, heads, 0, headDim] };
    }
    const out = await model.session.run(feeds);
    const [, positions, vocab] = out.logits.dims;
    const row = (out.logits.data as Float32Array).subarray(
      (positions - 1) * vocab,
      positions * vocab,
    );
    let best = 0;
    for (let i = 1; i < vocab; i++) if (row[i] > row[best]) best = i;
    if (best === eos) break;
    generated.push(best);
  }
  assertEquals(got.text, model.tokenizer.decode(generated, { skip_special_tokens: true }));
  assertEquals(got.completionTokens, generated.length + (generated.length < 12 ? 1 : 0));
  await engine.dispose();
});

Deno.test("ChatEngine builds its vocabulary while it loads, not on the first tools or logprobs request", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const read: string[] = [];
  const readJson = model.readJson;
  const engine = await ChatEngine.create({
    ...model,
    readJson: (name) => {
      read.push(name);
      return readJson(name);
    },
  }, { id: "demo/chat" });
  try {
    assert(read.includes("tokenizer.json"), `read while loading: ${read}`);
  } finally {
    await engine.dispose();
  }
});

Deno.test("ChatEngine batched greedy results equal each request run alone", async () => {
  const batched = await demoChatEngine();
  const alone = await demoChatEngine({ scheduler: { maxSequences: 1 } });
  const prompts = [
    "a",
    "Hello there, how are you today?",
    "x ".repeat(150),
    "Short one",
    "ü漢字😀",
  ];
  const together = await Promise.all(
    prompts.map((p) => run(batched, p, { ...GREEDY, maxTokens: 16 })),
  );
  for (const [i, prompt] of prompts.entries()) {
    assertEquals(
      together[i],
      await run(alone, prompt, { ...GREEDY, maxTokens: 16 }),
      `prompt ${i}`,
    );
  }
  assert(batched.stats().steps < alone.stats().steps, "batching should share decode steps");
  await batched.dispose();
  await alone.dispose();
});

Deno.test("ChatEngine sampling with the same seed gives the same text, another seed another", async () => {
  const engine = await demoChatEngine();
  const params = { temperature: 1, topP: 0.95, maxTokens: 24 };
  const a = await run(engine, "Once upon a time", { ...params, seed: 7 });
  const b = await run(engine, "Once upon a time", { ...params, seed: 7 });
  const c = await run(engine, "Once upon a time", { ...params, seed: 8 });
  assertEquals(a, b);
  assertNotEquals(a.text, c.text);
  await engine.dispose();
});

Deno.test("ChatEngine stops at a stop string split across tokens and never emits it", async () => {
  const engine = await demoChatEngine();
  const full = await run(engine, "Tell me a story", { ...GREEDY, maxTokens: 30 });
  assert(full.text.length > 12, `need some text, got ${JSON.stringify(full.text)}`);
  // A stop string that straddles token boundaries: the middle of the text.
  const stop = full.text.slice(5, 11);
  const cut = await run(engine, "Tell me a story", {
    ...GREEDY,
    maxTokens: 30,
    stop: [stop, "never-seen"],
  });
  assertEquals(cut.text, full.text.slice(0, full.text.indexOf(stop)));
  assertEquals(cut.finishReason, "stop");
  await engine.dispose();
});

Deno.test("ChatEngine ends with length at max_tokens and counts usage with the tokenizer", async () => {
  const engine = await demoChatEngine();
  const stream = await engine.generate({ prompt: "count me" }, {
    ...GREEDY,
    maxTokens: 3,
    stop: [],
  });
  assertEquals(stream.promptTokens, engine.countTokens("count me"));
  const events: GenerationEvent[] = [];
  for await (const e of stream) events.push(e);
  const finish = events.at(-1)!;
  assert(finish.type === "finish");
  assert(finish.usage.completionTokens <= 3);
  if (finish.usage.completionTokens === 3) assertEquals(finish.finishReason, "length");
  await engine.dispose();
});

Deno.test("ChatEngine ends with stop when the model emits end-of-sequence", async () => {
  const engine = await demoChatEngine();
  // Greedy decoding of random weights tends to loop; sampled replies reach EOS.
  const results = await Promise.all(
    [1, 2, 3, 4, 5, 6].map((seed) =>
      run(engine, "Hello", { temperature: 1, seed, maxTokens: 200 })
    ),
  );
  const stopped = results.filter((r) => r.finishReason === "stop");
  assert(stopped.length > 0, "the demo model's EOS bias should end some replies early");
  for (const r of stopped) assert(r.completionTokens < 200);
  await engine.dispose();
});

Deno.test("ChatEngine renders chat messages with the model's template", async () => {
  const engine = await demoChatEngine();
  const ids = engine.promptIds({
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "tool", content: "42", toolCallId: "call_1" },
      { role: "user", content: "Again" },
    ],
  });
  const plain = engine.promptIds({ prompt: "Hi" });
  assert(ids.length > plain.length + 5, "the template adds role markers");
  await engine.dispose();
});

Deno.test("ChatEngine refuses a prompt longer than the context, naming both lengths", async () => {
  const engine = await demoChatEngine();
  const tokenIds = Array(engine.info.contextLength + 5).fill(42);
  const err = await assertRejects(() => engine.generate({ tokenIds }, GREEDY), ContextLengthError);
  assertMatch(err.message, new RegExp(`${tokenIds.length}.*${engine.info.contextLength}`));
  await assertRejects(
    () => engine.generate({ tokenIds: [1, 2, 3] }, { maxTokens: engine.info.contextLength }),
    ContextLengthError,
    "max_tokens",
  );
  await engine.dispose();
});

Deno.test("ChatEngine repetition_penalty breaks a greedy loop", async () => {
  const engine = await demoChatEngine();
  const plain = await run(engine, "xxxxx", { ...GREEDY, maxTokens: 10 });
  const penalized = await run(engine, "xxxxx", { ...GREEDY, maxTokens: 10, repetitionPenalty: 3 });
  assertNotEquals(plain.text, penalized.text);
  await engine.dispose();
});

Deno.test("ChatEngine returns sorted top logprobs for each token when asked", async () => {
  const engine = await demoChatEngine();
  const stream = await engine.generate({ prompt: "abc" }, {
    ...GREEDY,
    maxTokens: 5,
    logprobs: true,
    topLogprobs: 3,
  });
  let count = 0;
  for await (const e of stream) {
    if (e.type !== "delta") continue;
    for (const lp of e.logprobs ?? []) {
      count++;
      assert(lp.logprob <= 0);
      assertEquals(lp.topLogprobs.length, 3);
      assertEquals(lp.topLogprobs[0].token, lp.token, "greedy picks the most likely token");
      assert(lp.topLogprobs[0].logprob >= lp.topLogprobs[1].logprob);
    }
  }
  assert(count > 0);
  await engine.dispose();
});

Deno.test("ChatEngine cancels a generation within one decode step of the abort", async () => {
  const engine = await demoChatEngine({ scheduler: { maxSequences: 4 } });
  // Find a seed whose reply is long enough to be cut.
  let seed = 0;
  while ((await run(engine, "go", { temperature: 1, seed, maxTokens: 40 })).completionTokens < 20) {
    seed++;
  }
  const controller = new AbortController();
  const stream = await engine.generate(
    { prompt: "go" },
    { temperature: 1, seed, maxTokens: 40 },
    controller.signal,
  );
  const before = engine.stats().steps;
  let deltas = 0;
  await assertRejects(async () => {
    for await (const e of stream) {
      if (e.type === "delta" && ++deltas === 2) controller.abort();
    }
  }, CancelledError);
  await new Promise((r) => setTimeout(r, 20));
  assert(engine.stats().steps - before <= deltas + 2, "decoding went on after the abort");
  assertEquals(engine.stats().running, 0);
  await engine.dispose();
});

Deno.test("ChatEngine refuses requests with a 429 error when its queue is full", async () => {
  const engine = await demoChatEngine({ scheduler: { maxSequences: 1, maxQueue: 1 } });
  const first = await engine.generate({ prompt: "a" }, { ...GREEDY, maxTokens: 4 });
  const second = await engine.generate({ prompt: "b" }, { ...GREEDY, maxTokens: 4 });
  const err = await assertRejects(() => engine.generate({ prompt: "c" }, GREEDY), RateLimitError);
  assertEquals(err.status, 429);
  await collect(first);
  await collect(second);
  await engine.dispose();
});

Deno.test("ChatEngine answers a burst of 200 concurrent requests, each with its own result", async () => {
  const engine = await demoChatEngine();
  const prompts = Array.from(
    { length: 200 },
    (_, i) => `request number ${i} ${"pad ".repeat(i % 17)}`,
  );
  const burst = await Promise.all(prompts.map((p) => run(engine, p, { ...GREEDY, maxTokens: 4 })));
  const alone = await demoChatEngine({ scheduler: { maxSequences: 1 } });
  for (let i = 0; i < prompts.length; i += 10) {
    assertEquals(
      burst[i],
      await run(alone, prompts[i], { ...GREEDY, maxTokens: 4 }),
      `request ${i}`,
    );
  }
  await engine.dispose();
  await alone.dispose();
});

Deno.test("ChatEngine cancelling one sequence mid-batch leaves the others unchanged", async () => {
  const engine = await demoChatEngine();
  const params = { temperature: 1, maxTokens: 30 };
  const expected = await Promise.all(
    [11, 12, 13].map((seed) => run(engine, "batch mate", { ...params, seed })),
  );
  const controller = new AbortController();
  const victim = await engine.generate(
    { prompt: "to be cancelled" },
    { ...GREEDY, maxTokens: 500 },
    controller.signal,
  );
  const mates = [11, 12, 13].map((seed) => run(engine, "batch mate", { ...params, seed }));
  const cancelled = (async () => {
    for await (const e of victim) if (e.type === "delta") controller.abort();
  })();
  await assertRejects(() => cancelled, CancelledError);
  assertEquals(await Promise.all(mates), expected);
  await engine.dispose();
});

Deno.test("ChatEngine refuses token ids outside the vocabulary with a 400 before queuing them", async () => {
  const engine = await demoChatEngine();
  const err = await assertRejects(
    () => engine.generate({ tokenIds: [5, 999_999_999] }, GREEDY),
    ValidationError,
  );
  assertEquals([err.status, err.param], [400, "prompt"]);
  assertMatch(err.message, /token id 999999999 at position 1/);
  assertEquals(engine.stats().queueDepth + engine.stats().running, 0);
  await engine.dispose();
});

Deno.test("ChatEngine.generateAll() refuses a request over its prompt token limit, naming the flag", async () => {
  const engine = await demoChatEngine({ limits: { maxPromptTokens: 10 } });
  const input = { tokenIds: [5, 6, 7, 8] };
  const jobs = [1, 2, 3].map(() => ({ input, params: GREEDY }));
  const err = await assertRejects(() => engine.generateAll(jobs), ValidationError);
  assertEquals(err.param, "prompt");
  assertMatch(err.message, /12, more than this server's limit of 10 .*--max-prompt-tokens/);
  assertEquals(engine.stats().steps, 0);
  await engine.dispose();
});

Deno.test("ChatEngine.generateAll() bounds the tokens a request may generate (max_tokens × n), naming the flag", async () => {
  const engine = await demoChatEngine({ limits: { maxGeneratedTokens: 20 } });
  const input = { tokenIds: [5, 6, 7, 8] };
  const jobs = (maxTokens?: number) =>
    [1, 2, 3].map(() => ({ input, params: { ...GREEDY, maxTokens } }));
  const over = await assertRejects(() => engine.generateAll(jobs(7)), ValidationError);
  assertEquals([over.status, over.param], [400, "max_tokens"]);
  assertMatch(over.message, /21, more than this server's limit of 20 .*--max-generated-tokens/);
  // Unset, each choice may fill the context: that counts, and the message says so.
  const unset = await assertRejects(() => engine.generateAll(jobs()), ValidationError);
  assertMatch(unset.message, /max_tokens unset/);
  assertEquals(engine.stats().steps, 0);
  const fits = await engine.generateAll(jobs(6));
  for (const stream of fits) await collect(stream);
  await engine.dispose();
});

Deno.test("ChatEngine.generateAll() queues all of a request's sequences or none", async () => {
  const engine = await demoChatEngine({ scheduler: { maxSequences: 1, maxQueue: 3 } });
  const busy = await engine.generate({ prompt: "a" }, { ...GREEDY, maxTokens: 4 });
  const jobs = (count: number) =>
    Array.from({ length: count }, () => ({ input: { prompt: "b" }, params: GREEDY }));
  // More than the queue could ever hold: a 400 that names the flag, not a 429 forever.
  const never = await assertRejects(() => engine.generateAll(jobs(4)), ValidationError);
  assertMatch(never.message, /4 sequences .*--max-queue/);
  const two = await engine.generateAll(jobs(2).map((j) => ({ ...j, params: { maxTokens: 2 } })));
  // Two wait, room for one more: a request of two is refused whole.
  await assertRejects(() => engine.generateAll(jobs(2)), RateLimitError);
  assertEquals(engine.stats().queueDepth, 2);
  await Promise.all([busy, ...two].map(collect));
  await engine.dispose();
});

Deno.test("ChatEngine.generateAll() admits the most a request may start, and refuses 256k at once", async () => {
  const engine = await demoChatEngine({ limits: { maxSequences: 1e6, maxPromptTokens: 1e9 } });
  const request = (prompts: number, n: number) =>
    Array.from({ length: prompts }, (_, i) => ({ prompt: `prompt ${i}` })).flatMap((input) =>
      Array.from({ length: n }, () => ({ input, params: { ...GREEDY, maxTokens: 1 } }))
    );
  // The measured attack (2000 prompts × n 128): one 400 before any work; on main, minutes.
  let started = performance.now();
  const err = await assertRejects(() => engine.generateAll(request(2000, 128)), ValidationError);
  assertMatch(err.message, /256000 sequences .*--max-queue/);
  const refusedMs = performance.now() - started;
  assert(refusedMs < 5000, `refused in ${refusedMs.toFixed(0)} ms`);
  // The default queue's worth (2 × 128 = 256) is admitted in one step and answered.
  started = performance.now();
  const streams = await engine.generateAll(request(2, 128));
  const admittedMs = performance.now() - started;
  assert(admittedMs < 5000, `admitted in ${admittedMs.toFixed(0)} ms`);
  assertEquals(streams.length, 256);
  await Promise.all(streams.map(collect));
  await engine.dispose();
});

Deno.test("ChatEngine fails only the sequence whose prefill fails, not the ones batched with it", async () => {
  const POISON = 4000n; // a valid id the wrapped model fails on, as if the model broke on it
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const inner = model.session;
  const session = wrappedSession(inner, {
    run: (feeds) =>
      (feeds.input_ids.data as BigInt64Array).includes(POISON)
        ? Promise.reject(new Error("the model failed on this row"))
        : inner.run(feeds),
  });
  const engine = await ChatEngine.create({ ...model, session }, { id: "demo/chat" });
  const params = { ...GREEDY, maxTokens: 4 };
  const alone = await collect(await engine.generate({ tokenIds: [10, 11, 12] }, params));
  // While the first runs, the other two wait and are prefilled together in one call.
  const first = engine.generate({ prompt: "keep the loop busy" }, params);
  const bad = engine.generate({ tokenIds: [Number(POISON), 5] }, params);
  const good = engine.generate({ tokenIds: [10, 11, 12] }, params);
  await assertRejects(async () => await collect(await bad), Error);
  assertEquals(await collect(await good), alone);
  await collect(await first);
  await engine.dispose();
});

Deno.test("ChatEngine prefills a long prompt in chunks between a running stream's decode steps", async () => {
  const CHUNK = 16;
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const inner = model.session;
  // Every model call as [rows, new tokens per row, cached tokens].
  const calls: [number, number, number][] = [];
  // Decode loops in the worker run before and after the chunks (never between: not counted).
  const session = wrappedSession(inner, {
    run: (feeds) => {
      const [rows, width] = feeds.input_ids.dims;
      calls.push([rows, width, feeds.attention_mask.dims[1] - width]);
      return inner.run(feeds);
    },
  });
  const params = { ...GREEDY, maxTokens: 40 };
  const running = { tokenIds: [20, 23, 26, 29, 32] };
  const long = { tokenIds: Array.from({ length: 100 }, (_, i) => 10 + i) };
  const whole = await ChatEngine.create({ ...model, session }, { id: "whole" });
  const expected = [
    await collect(await whole.generate(running, params)),
    await collect(await whole.generate(long, params)),
  ];

  const chunked = await ChatEngine.create({ ...model, session }, {
    id: "chunked",
    scheduler: { prefillChunk: CHUNK },
  });
  const first = await chunked.generate(running, params);
  const events = first[Symbol.asyncIterator]();
  // The running stream has its first token: it is decoding now.
  const rest: GenerationEvent[] = [(await events.next()).value as GenerationEvent];
  calls.length = 0;
  const second = chunked.generate(long, params);
  for (let e = await events.next(); !e.done; e = await events.next()) rest.push(e.value);
  const got = await collect(await second);
  await chunked.dispose();
  await whole.dispose();

  // Same text as a whole prefill; and the running stream never waited for more than one chunk.
  assertEquals(got, expected[1]);
  assertEquals(
    await collect((async function* () {
      yield* rest;
    })()),
    expected[0],
  );
  const prefills = calls.filter(([, width]) => width > 1);
  assertEquals(prefills.length, Math.ceil(long.tokenIds.length / CHUNK));
  for (const [rows, width] of prefills) assert(rows * width <= CHUNK, JSON.stringify(calls));
  const firstChunk = calls.findIndex(([, width]) => width > 1);
  const lastChunk = calls.findLastIndex(([, width]) => width > 1);
  for (let i = firstChunk + 1; i <= lastChunk; i++) {
    if (calls[i][1] > 1) {
      assertEquals(calls[i - 1], [1, 1, calls[i - 1][2]], `no decode step before call ${i}`);
    }
  }
  // Each chunk goes on from the cache of the one before.
  assertEquals(prefills.map(([, , past]) => past), prefills.map((_, i) => i * CHUNK));
});

// In the model worker (cpu, wasm), or in this thread as on webgpu (where the cache stays on the GPU).
for (const inWorker of [true, false]) {
  Deno.test(`ChatEngine batches decoded in a loop ${inWorker ? "in the model worker" : "in this thread"} equal step-by-step decoding, seeds included`, async () => {
    const model = await loadModel(await demoFolder("demo/chat"), "chat", {
      device: "cpu",
      dtype: "q8",
      inWorker,
    });
    const inner = model.session;
    let loops = 0;
    const session = wrappedSession(inner, {
      decodeLoop: (spec) => {
        loops++;
        return inner.decodeLoop!(spec);
      },
    });
    // Different lengths and limits: rows leave the loop at different steps, others join mid-way;
    // seeded sampling and penalties continue in the worker; logprobs keep a batch stepping here.
    const jobs: ({ input: { tokenIds: number[] } | { prompt: string } } & SamplingParams)[] = [
      { input: { tokenIds: [20, 23, 26, 29, 32] }, maxTokens: 30 },
      { input: { prompt: "The quick brown fox" }, maxTokens: 12 },
      { input: { tokenIds: [41, 44, 47] }, maxTokens: 25, stop: ["zz"] },
      { input: { prompt: "Once upon a time" }, maxTokens: 7 },
      { input: { tokenIds: [5, 6, 7] }, maxTokens: 20, temperature: 0.9, topP: 0.9, seed: 7 },
      {
        input: { prompt: "go" },
        maxTokens: 18,
        temperature: 1.2,
        topK: 40,
        seed: 3,
        frequencyPenalty: 0.5,
        repetitionPenalty: 1.3,
      },
      { input: { prompt: "tell me" }, maxTokens: 6, temperature: 0.7, seed: 1, logprobs: true },
    ];
    const generate = async (engine: ChatEngine) => {
      const first = engine.generate(jobs[0].input, { ...GREEDY, ...jobs[0] });
      const rest = jobs.slice(1).map(async (job, i) => {
        await new Promise((r) => setTimeout(r, 20 * (i + 1)));
        return await collect(await engine.generate(job.input, { ...GREEDY, ...job }));
      });
      return [await collect(await first), ...await Promise.all(rest)];
    };
    const stepwise = await ChatEngine.create({ ...model, session }, {
      id: "stepwise",
      scheduler: { decodeInWorker: false },
    });
    const expected = await generate(stepwise);
    assertEquals(loops, 0);
    const looped = await ChatEngine.create({ ...model, session }, { id: "looped" });
    assertEquals(await generate(looped), expected);
    const steps = looped.stats().steps;
    assert(loops > 0 && loops < steps, `${loops} loops for ${steps} steps`);
    // A seeded, penalized sequence alone is sampled in the worker from its first step on.
    const { input, ...sampled } = jobs[5];
    const loopsBefore = loops;
    assertEquals(await collect(await looped.generate(input, sampled)), expected[5]);
    assertEquals(loops, loopsBefore + 1);

    // Cancelling a sequence decoded in the worker stops decoding within a step or two.
    const controller = new AbortController();
    const stream = await looped.generate(
      jobs[0].input,
      { ...GREEDY, maxTokens: 30 },
      controller.signal,
    );
    const before = looped.stats().steps;
    let deltas = 0;
    await assertRejects(async () => {
      for await (const e of stream) {
        if (e.type === "delta" && ++deltas === 3) controller.abort();
      }
    }, CancelledError);
    await new Promise((r) => setTimeout(r, 50));
    assert(looped.stats().steps - before <= deltas + 3, "decoding went on after the abort");
    assertEquals(looped.stats().running, 0);
    await stepwise.dispose();
    await looped.dispose();
  });
}
