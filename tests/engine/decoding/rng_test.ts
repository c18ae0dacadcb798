import { Rng } from "../../../src/engine/decoding/rng.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import { assert, assertEquals, assertNotEquals, assertThrows } from "../../_assert.ts";

function words(rng: Rng, n: number): number[] {
  return Array.from({ length: n }, () => rng.nextUint32());
}

// Reference values from an independent Python implementation of splitmix64 + xoshiro128**:
// they pin the sequence across processes, platforms and releases.
Deno.test("Rng produces the reference xoshiro128** sequence for a seed", () => {
  assertEquals(words(new Rng(42), 5), [1776835114, 4165204688, 17111135, 2317295270, 2792088233]);
  assertEquals(words(new Rng(0), 5), [3737715805, 2584255861, 2876756834, 3286328325, 1553311962]);
  assertEquals(words(new Rng(-1), 5), [477689756, 2493998634, 555695776, 607808419, 61340979]);
  assertEquals(
    words(new Rng(2 ** 40 + 3), 5),
    [3996565548, 2651484870, 3505435812, 2468236740, 1528547706],
  );
});

Deno.test("Rng gives independent streams of one seed when stream differs", () => {
  assertEquals(words(new Rng(42, { stream: 0 }), 3), words(new Rng(42), 3));
  assertEquals(words(new Rng(42, { stream: 1 }), 5), [
    2826109939,
    1737976583,
    4291773429,
    715660696,
    1669876808,
  ]);
});

Deno.test("Rng with the same seed repeats and with different seeds differs", () => {
  assertEquals(words(new Rng(7), 100), words(new Rng(7), 100));
  assertNotEquals(words(new Rng(7), 100), words(new Rng(8), 100));
});

Deno.test("Rng without a seed draws a random one", () => {
  const a = new Rng();
  const b = new Rng();
  assert(typeof a.seed === "bigint");
  assertNotEquals(words(a, 4), words(b, 4));
});

Deno.test("Rng.nextFloat() stays in [0, 1) and is uniform on average", () => {
  const rng = new Rng(123);
  const bins = new Array(10).fill(0);
  let sum = 0;
  for (let i = 0; i < 100_000; i++) {
    const u = rng.nextFloat();
    assert(u >= 0 && u < 1, `out of range: ${u}`);
    sum += u;
    bins[Math.floor(u * 10)]++;
  }
  assert(Math.abs(sum / 100_000 - 0.5) < 0.005);
  for (const count of bins) assert(Math.abs(count - 10_000) < 500, `bin count ${count}`);
});

Deno.test("Rng rejects a seed that is not an integer", () => {
  const err = assertThrows(() => new Rng(1.5), ValidationError, "seed must be an integer");
  assertEquals(err.param, "seed");
  assertThrows(() => new Rng(Number.NaN), ValidationError);
});
