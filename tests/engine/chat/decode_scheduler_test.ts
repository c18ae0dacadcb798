// The decode scheduler on the demo model with sequences of our own, whose code can throw or queue
// more work at chosen moments: every sequence handed to it settles, and one sequence's failure is
// its own.
import { assert, assertEquals, assertRejects } from "../../_assert.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import { planFor } from "../../../src/engine/families/decoder_families.ts";
import {
  DecodeScheduler,
  type ScheduledSequence,
  type SchedulerOptions,
} from "../../../src/engine/chat/decode_scheduler.ts";

/** A greedy sequence of `length` tokens; `onToken(i)` runs before it takes token `i`. */
class TestSequence implements ScheduledSequence {
  readonly tokens: number[] = [];
  readonly #done = Promise.withResolvers<number[]>();
  constructor(
    readonly promptIds: readonly number[],
    readonly length: number,
    readonly onToken: (i: number) => void = () => {},
  ) {}

  accept(logits: Float32Array): number | null {
    this.onToken(this.tokens.length);
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    this.tokens.push(best);
    if (this.tokens.length < this.length) return best;
    this.#done.resolve(this.tokens);
    return null;
  }

  fail(err: unknown): void {
    this.#done.reject(err);
  }

  /** Its tokens once finished; rejects with its error, or when it has not settled in 10 s. */
  settled(): Promise<number[]> {
    const stuck = Promise.withResolvers<never>();
    const timer = setTimeout(() => stuck.reject(new Error("never settled")), 10_000);
    return Promise.race([this.#done.promise, stuck.promise]).finally(() => clearTimeout(timer));
  }
}

async function scheduler(options: Partial<SchedulerOptions> = {}) {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  const plan = planFor({
    inputs: model.session.inputs,
    outputNames: model.session.outputNames,
    config: model.config,
    opTypes: new Set(),
  }, "demo/chat");
  const scheduler = new DecodeScheduler(model.session, plan, {
    maxSequences: 8,
    maxBatchTokens: 4096,
    maxQueue: 64,
    ...options,
  });
  return Object.assign(scheduler, {
    async [Symbol.asyncDispose]() {
      await scheduler.idle();
      await model.session.release();
    },
  });
}

const PROMPTS = [[5, 6, 7], [8, 9, 10, 11], [12, 13]];

Deno.test("DecodeScheduler starts a sequence queued just as its loop runs out of work", async () => {
  // The loop ends when nothing waits; a sequence queued in the microtasks between its last check
  // and the end once found the loop still marked as running and waited forever.
  await using s = await scheduler();
  for (let ticks = 0; ticks < 12; ticks++) {
    let second: TestSequence | undefined;
    const first = new TestSequence([5, 6, 7], 2, (i) => {
      if (i < 1) return;
      queueMicrotask(async () => {
        for (let t = 0; t < ticks; t++) await Promise.resolve();
        second = new TestSequence([8, 9], 2);
        s.submitAll([second]);
      });
    });
    s.submitAll([first]);
    await first.settled();
    while (second === undefined) await Promise.resolve();
    await second.settled();
  }
});

for (const [where, at] of [["its first token", 0], ["a later token", 2]] as const) {
  Deno.test(`DecodeScheduler fails only the sequence that throws at ${where}`, async () => {
    await using s = await scheduler({ prefixCacheBytes: 0 });
    const alone = [];
    for (const prompt of PROMPTS) {
      const seq = new TestSequence(prompt, 5);
      s.submitAll([seq]);
      alone.push(await seq.settled());
    }
    const seqs = PROMPTS.map((prompt, n) =>
      new TestSequence(prompt, 5, (i) => {
        if (n === 1 && i === at) throw new Error("this sequence's own bug");
      })
    );
    s.submitAll(seqs);
    await assertRejects(() => seqs[1].settled(), Error, "own bug");
    assertEquals(await seqs[0].settled(), alone[0]);
    assertEquals(await seqs[2].settled(), alone[2]);
    assertEquals(s.stats().running, 0);
  });
}

Deno.test("DecodeScheduler fails only the sequence that throws on a prefix cache hit", async () => {
  await using s = await scheduler();
  const system = Array.from({ length: 70 }, (_, i) => 30 + i);
  const warm = new TestSequence(system, 1);
  s.submitAll([warm]);
  await warm.settled();
  const bad = new TestSequence([...system, 1], 3, () => {
    throw new Error("this sequence's own bug");
  });
  const good = new TestSequence([...system, 2], 3);
  s.submitAll([bad, good]);
  await assertRejects(() => bad.settled(), Error, "own bug");
  assertEquals((await good.settled()).length, 3);
  assertEquals(s.stats().prefixCache!.hits, 2);
});

Deno.test("DecodeScheduler lets a small request start while a big one fills the batch", async () => {
  // One request of 24 long sequences would take all 16 rows until its first ones end; a request
  // arriving just after gets a row at the next admission and ends long before them.
  await using s = await scheduler({ maxSequences: 16, prefixCacheBytes: 0 });
  const big = Array.from({ length: 24 }, (_, i) => new TestSequence([5, 6, 7 + i], 40));
  let small: TestSequence | undefined;
  big[0] = new TestSequence([5, 6, 7], 40, (i) => {
    if (i !== 2) return;
    small = new TestSequence([9, 9], 3);
    s.submitAll([small]);
  });
  s.submitAll(big);
  while (small === undefined) await new Promise((r) => setTimeout(r, 1));
  await small.settled();
  const longest = Math.max(...big.map((seq) => seq.tokens.length));
  assert(longest < 20, `the small request ended after the big one's rows wrote ${longest} tokens`);
  await Promise.all(big.map((seq) => seq.settled()));
});

Deno.test("DecodeScheduler queues requests round-robin: each one's first sequence before any second", async () => {
  await using s = await scheduler({ maxSequences: 1, prefixCacheBytes: 0 });
  const order: string[] = [];
  const seq = (name: string) => new TestSequence([5, 6], 1, () => void order.push(name));
  const blocker = new TestSequence([5, 6], 1, () => {
    if (order.length > 0) return;
    order.push("blocker");
    s.submitAll([seq("a1"), seq("a2"), seq("a3")]);
    s.submitAll([seq("b1"), seq("b2")]);
    s.submitAll([seq("c1")]);
  });
  s.submitAll([blocker]);
  await s.idle();
  assertEquals(order, ["blocker", "a1", "b1", "c1", "a2", "b2", "a3"]);
});
