import { MIN_LOGPROB, SequenceSampler } from "../../../src/engine/decoding/sampler.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import type { SamplingParams } from "../../../src/core/inference_types.ts";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../../_assert.ts";

const LOGITS = new Float32Array([1.0, 2.5, 0.3, 2.0, -1.0, 0.0, 1.7, -0.5]);

function softmax(values: ArrayLike<number>, temperature = 1): number[] {
  const scaled = Array.from(values, (v) => v / temperature);
  const m = Math.max(...scaled);
  const e = scaled.map((v) => Math.exp(v - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
}

function draws(params: SamplingParams, count: number, logits: Float32Array = LOGITS): number[] {
  const sampler = new SequenceSampler(params);
  return Array.from({ length: count }, () => sampler.sample(logits).tokenId);
}

function histogram(ids: number[], vocab: number): number[] {
  const counts = new Array(vocab).fill(0);
  for (const id of ids) counts[id]++;
  return counts;
}

/** Random logits row of a realistic vocabulary. */
function bigRow(vocab: number, seed: number): Float32Array {
  const row = new Float32Array(vocab);
  let x = seed;
  for (let i = 0; i < vocab; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    row[i] = (x / 2 ** 32) * 8 - 4;
  }
  return row;
}

Deno.test("SequenceSampler with one seed reproduces draws and different seeds differ", () => {
  const a = draws({ seed: 11 }, 200);
  assertEquals(a, draws({ seed: 11 }, 200));
  const b = draws({ seed: 12 }, 200);
  assert(a.some((id, i) => id !== b[i]));
});

Deno.test("SequenceSampler gives choices of one seed different streams", () => {
  const first = new SequenceSampler({ seed: 3 }, { stream: 0 });
  const second = new SequenceSampler({ seed: 3 }, { stream: 1 });
  const x = Array.from({ length: 50 }, () => first.sample(LOGITS).tokenId);
  const y = Array.from({ length: 50 }, () => second.sample(LOGITS).tokenId);
  assert(x.some((id, i) => id !== y[i]));
});

Deno.test("SequenceSampler with temperature 0 is argmax, ties to the lowest id", () => {
  assertEquals(draws({ temperature: 0 }, 5), [1, 1, 1, 1, 1]);
  const tied = new Float32Array([0, 3, 1, 3]);
  assertEquals(new SequenceSampler({ temperature: 0 }).sample(tied).tokenId, 1);
});

Deno.test("SequenceSampler approaches greedy as temperature goes to 0", () => {
  assert(draws({ temperature: 0.01, seed: 1 }, 500).every((id) => id === 1));
  const warm = histogram(draws({ temperature: 0.2, seed: 1 }, 2000), LOGITS.length);
  const hot = histogram(draws({ temperature: 1, seed: 1 }, 2000), LOGITS.length);
  assert(warm[1] > hot[1]);
});

Deno.test("SequenceSampler with top_k=1 is greedy", () => {
  assert(draws({ topK: 1, seed: 9 }, 300).every((id) => id === 1));
  const row = bigRow(50_000, 1);
  const greedy = new SequenceSampler({ temperature: 0 }).sample(row).tokenId;
  const sampler = new SequenceSampler({ topK: 1, seed: 2, temperature: 1.5 });
  for (let i = 0; i < 5; i++) assertEquals(sampler.sample(row).tokenId, greedy);
});

Deno.test("SequenceSampler with a small top_p keeps only the top token", () => {
  assert(draws({ topP: 0.01, seed: 4 }, 300).every((id) => id === 1));
  assert(draws({ topP: 0, seed: 4 }, 50).every((id) => id === 1));
});

Deno.test("SequenceSampler min_p keeps the tokens at least min_p times as likely as the best", () => {
  // LOGITS' best is 2.5 (id 1); at temperature 1, e^(x - 2.5) >= 0.4 keeps 2.0 and 1.7 too.
  const seen = new Set(draws({ minP: 0.4, seed: 9 }, 2000));
  assertEquals([...seen].sort(), [1, 3, 6]);
  // At temperature 2 the ratios are square roots: 1.0 (e^-0.75 = 0.47) comes in as well.
  assertEquals([...new Set(draws({ minP: 0.4, temperature: 2, seed: 9 }, 4000))].sort(), [
    0,
    1,
    3,
    6,
  ]);
  assertThrows(() => new SequenceSampler({ minP: 1.5 }), ValidationError, "min_p");
});

Deno.test("SequenceSampler adds logit_bias and holds end tokens back until min_tokens", () => {
  assert(draws({ temperature: 0, logitBias: { 4: 10 } }, 5).every((id) => id === 4));
  const sampler = new SequenceSampler({ temperature: 0, minTokens: 3, logitBias: { 5: 50 } }, {
    endIds: [5],
  });
  const chosen = Array.from({ length: 5 }, () => sampler.sample(LOGITS).tokenId);
  assertEquals(chosen, [1, 1, 1, 5, 5]);
});

Deno.test("SequenceSampler draws match softmax (chi-square, 10k draws)", () => {
  for (const temperature of [1, 0.7, 1.6]) {
    const expected = softmax(LOGITS, temperature);
    const counts = histogram(draws({ temperature, seed: 2024 }, 10_000), LOGITS.length);
    const chi2 = counts.reduce(
      (sum, c, i) => sum + (c - 10_000 * expected[i]) ** 2 / (10_000 * expected[i]),
      0,
    );
    // 7 degrees of freedom: P(chi2 > 24.3) = 0.001.
    assert(chi2 < 24.3, `temperature ${temperature}: chi2 ${chi2}, counts ${counts}`);
  }
});

Deno.test("SequenceSampler top_k renormalizes over the k best tokens", () => {
  const counts = histogram(draws({ topK: 3, seed: 77 }, 10_000), LOGITS.length);
  const kept = [1, 3, 6];
  const expected = softmax(kept.map((id) => LOGITS[id]));
  counts.forEach((c, id) => {
    if (!kept.includes(id)) assertEquals(c, 0, `token ${id} outside top-3`);
  });
  const chi2 = kept.reduce(
    (sum, id, j) => sum + (counts[id] - 10_000 * expected[j]) ** 2 / (10_000 * expected[j]),
    0,
  );
  assert(chi2 < 13.8, `chi2 ${chi2}`); // 2 degrees of freedom, p = 0.001
});

Deno.test("SequenceSampler top_p keeps the smallest prefix reaching the mass", () => {
  const p = softmax(LOGITS); // sorted: 1 (0.33), 3 (0.20), 6 (0.15), 0 (0.10) ...
  const order = [1, 3, 6, 0];
  const mass3 = p[1] + p[3] + p[6];
  // Just under three tokens' mass keeps exactly those three, both with and without top_k.
  for (const params of [{ topP: mass3 - 0.01 }, { topP: mass3 - 0.01, topK: 6 }]) {
    const counts = histogram(draws({ ...params, seed: 5 }, 5000), LOGITS.length);
    counts.forEach((c, id) => assertEquals(c > 0, order.slice(0, 3).includes(id), `id ${id}`));
  }
});

Deno.test("SequenceSampler top_p keeps exactly the reference nucleus on a large vocabulary", () => {
  const vocab = 3000;
  const row = bigRow(vocab, 3);
  for (const [topP, temperature] of [[0.3, 1], [0.9, 0.7], [0.05, 2]]) {
    // Reference: sort everything, keep the smallest prefix whose probability reaches top_p.
    const p = softmax(row, temperature);
    const ranked = [...p.keys()].sort((a, b) => p[b] - p[a] || a - b);
    let cumulative = 0;
    let expected = 0;
    while (cumulative < topP) cumulative += p[ranked[expected++]];
    // Processed logprobs mark tokens outside the kept set with -9999, which exposes the cut.
    for (const topK of [0, vocab - 1]) {
      const sampler = new SequenceSampler(
        { topP, temperature, topK, seed: 1, topLogprobs: vocab },
        { logprobsMode: "processed" },
      );
      const top = sampler.sample(row).topLogprobs!;
      const kept = top.filter((t) => t.logprob > MIN_LOGPROB);
      assertEquals(kept.length, expected, `top_p ${topP}, top_k ${topK}`);
      assertEquals(kept.map((t) => t.tokenId), ranked.slice(0, expected));
      const mass = kept.reduce((sum, t) => sum + Math.exp(t.logprob), 0);
      assertAlmostEquals(mass, 1, 1e-6);
    }
  }
});

Deno.test("SequenceSampler top_p over a 150k vocabulary draws only from the nucleus", () => {
  const row = bigRow(150_000, 3);
  row[10] = 20;
  row[20] = 19.5;
  row[30] = 19;
  const ids = new Set(draws({ topP: 0.8, seed: 1 }, 300, row));
  assertEquals([...ids].sort(), [10, 20]);
  const viaK = new Set(draws({ topP: 0.8, topK: 100, seed: 1 }, 300, row));
  assertEquals([...viaK].sort(), [10, 20]);
});

Deno.test("SequenceSampler applies penalties before choosing", () => {
  const logits = new Float32Array([5, 4.5, 0]);
  const sampler = new SequenceSampler({ temperature: 0, frequencyPenalty: 1 });
  // 5, then 4.5 beats 5-1, then 5-1 beats 4.5-1, ...
  const ids = Array.from({ length: 4 }, () => sampler.sample(logits).tokenId);
  assertEquals(ids, [0, 1, 0, 1]);
  assertEquals(sampler.generatedCount, 4);
  const rep = new SequenceSampler({ temperature: 0, repetitionPenalty: 1.2 }, {
    promptTokens: [0],
  });
  assertEquals(rep.sample(logits).tokenId, 1); // 5 / 1.2 < 4.5
});

Deno.test("SequenceSampler does not modify the caller's logits row", () => {
  const row = Float32Array.from(LOGITS);
  const sampler = new SequenceSampler({ repetitionPenalty: 2, presencePenalty: 1, seed: 1 }, {
    promptTokens: [0, 1, 2],
  });
  for (let i = 0; i < 10; i++) sampler.sample(row);
  assertEquals([...row], [...LOGITS]);
});

Deno.test("SequenceSampler raw logprobs are the model's log-softmax, best first", () => {
  const sampler = new SequenceSampler({
    temperature: 0.5,
    topK: 2,
    presencePenalty: 2,
    seed: 1,
    topLogprobs: 8,
  });
  const result = sampler.sample(LOGITS);
  const p = softmax(LOGITS);
  assertAlmostEquals(result.logprob!, Math.log(p[result.tokenId]), 1e-5);
  const top = result.topLogprobs!;
  assertEquals(top.length, 8);
  assertEquals(top.map((t) => t.tokenId), [1, 3, 6, 0, 2, 5, 7, 4]);
  for (let i = 1; i < top.length; i++) assert(top[i - 1].logprob >= top[i].logprob);
  const total = top.reduce((sum, t) => sum + Math.exp(t.logprob), 0);
  assertAlmostEquals(total, 1, 1e-5);
});

Deno.test("SequenceSampler processed logprobs describe the truncated distribution", () => {
  const sampler = new SequenceSampler({ temperature: 0.5, topK: 2, seed: 1, topLogprobs: 3 }, {
    logprobsMode: "processed",
  });
  const result = sampler.sample(LOGITS);
  const p = softmax([LOGITS[1], LOGITS[3]], 0.5);
  const top = result.topLogprobs!;
  assertEquals(top.map((t) => t.tokenId), [1, 3, 6]);
  assertAlmostEquals(top[0].logprob, Math.log(p[0]), 1e-5);
  assertAlmostEquals(top[1].logprob, Math.log(p[1]), 1e-5);
  assertEquals(top[2].logprob, MIN_LOGPROB);
  assertEquals(result.logprob, top.find((t) => t.tokenId === result.tokenId)!.logprob);
});

Deno.test("SequenceSampler returns logprobs only when asked", () => {
  assertEquals(Object.keys(new SequenceSampler({ seed: 1 }).sample(LOGITS)), ["tokenId"]);
  const only = new SequenceSampler({ temperature: 0, logprobs: true }).sample(LOGITS);
  assertEquals(only.topLogprobs, []);
  assertAlmostEquals(only.logprob!, Math.log(softmax(LOGITS)[1]), 1e-5);
});

Deno.test("SequenceSampler reports a masked token's logprob as -9999", () => {
  const row = new Float32Array([0, -Infinity, 1]);
  const result = new SequenceSampler({ temperature: 0, topLogprobs: 3 }).sample(row);
  assertEquals(result.topLogprobs!.map((t) => t.tokenId), [2, 0, 1]);
  assertEquals(result.topLogprobs![2].logprob, MIN_LOGPROB);
});

Deno.test("SequenceSampler never picks a -Infinity token and survives an all-masked row", () => {
  const row = new Float32Array([-Infinity, 0, -Infinity, 0]);
  assert(draws({ seed: 8 }, 500, row).every((id) => id === 1 || id === 3));
  assertEquals(draws({ seed: 8 }, 1, new Float32Array([-Infinity, -Infinity])), [0]);
});

Deno.test("SequenceSampler rejects out-of-range parameters with the field name", () => {
  const cases: [SamplingParams, string][] = [
    [{ temperature: -1 }, "temperature"],
    [{ topP: 1.5 }, "top_p"],
    [{ topK: 2.5 }, "top_k"],
    [{ topLogprobs: -1 }, "top_logprobs"],
    [{ repetitionPenalty: -1 }, "repetition_penalty"],
    [{ seed: 0.5 }, "seed"],
  ];
  for (const [params, field] of cases) {
    assertEquals(assertThrows(() => new SequenceSampler(params), ValidationError).param, field);
  }
});

// Speed is measured in bench/sampler_bench.ts, not asserted here (a busy machine made a time
// bound fail); this checks that the partial selection stays correct at a large vocabulary.
Deno.test("SequenceSampler draws within top-k and top-p on a 150k vocabulary", () => {
  const row = bigRow(150_000, 9);
  const ranked = [...row.keys()].sort((a, b) => row[b] - row[a]);
  const rankOf = new Map(ranked.map((id, rank) => [id, rank]));
  // Smallest prefix of the ranked ids whose probability reaches p.
  const nucleus = (p: number, temperature = 1): number => {
    const max = row[ranked[0]];
    const weights = ranked.map((id) => Math.exp((row[id] - max) / temperature));
    const total = weights.reduce((a, b) => a + b, 0);
    let mass = 0;
    for (let i = 0; i < weights.length; i++) {
      mass += weights[i] / total;
      if (mass >= p) return i + 1;
    }
    return weights.length;
  };
  const cases: [SamplingParams, number][] = [
    [{ temperature: 0 }, 1],
    [{ topK: 40, seed: 1 }, 40],
    [{ topK: 500, topP: 0.9, seed: 1 }, 500],
    [{ topP: 0.95, seed: 1 }, nucleus(0.95)],
  ];
  for (const [params, allowed] of cases) {
    const sampler = new SequenceSampler(params);
    for (let i = 0; i < 20; i++) {
      const { tokenId } = sampler.sample(row);
      const rank = rankOf.get(tokenId)!;
      assert(rank < allowed, `${JSON.stringify(params)}: drew rank ${rank}, allowed < ${allowed}`);
    }
  }
});
