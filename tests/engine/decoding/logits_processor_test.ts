import {
  applyPresenceFrequencyPenalty,
  applyRepetitionPenalty,
  LogitsProcessor,
} from "../../../src/engine/decoding/logits_processor.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../../_assert.ts";

Deno.test("applyRepetitionPenalty() divides positive, multiplies negative logits, once per id", () => {
  const row = new Float32Array([2, -2, 1, 0, 3]);
  applyRepetitionPenalty(row, [0, 1, 1, 1, 3, 99, -1], 2);
  assertEquals([...row], [1, -4, 1, 0, 3]);
});

Deno.test("applyRepetitionPenalty() below 1 encourages repeats", () => {
  const row = new Float32Array([2, -2]);
  applyRepetitionPenalty(row, [0, 1], 0.5);
  assertEquals([...row], [4, -1]);
});

Deno.test("applyPresenceFrequencyPenalty() subtracts presence + frequency * count", () => {
  const row = new Float32Array([1, 1, 1, 1]);
  applyPresenceFrequencyPenalty(row, new Map([[1, 1], [2, 3], [7, 2]]), {
    presence: 0.5,
    frequency: 0.25,
  });
  assertAlmostEquals(row[0], 1, 1e-6);
  assertAlmostEquals(row[1], 1 - 0.5 - 0.25, 1e-6);
  assertAlmostEquals(row[2], 1 - 0.5 - 0.75, 1e-6);
  assertAlmostEquals(row[3], 1, 1e-6);
});

Deno.test("LogitsProcessor penalizes repeats of prompt + generated, counts of generated only", () => {
  const proc = new LogitsProcessor(
    { repetitionPenalty: 1.5, presencePenalty: 1, frequencyPenalty: 0.5 },
    { promptTokens: [0, 0, 1] },
  );
  assert(proc.active);
  proc.record(2);
  proc.record(2);
  proc.record(1);
  assertEquals(proc.countOf(2), 2);
  assertEquals(proc.generatedCount, 3);
  const row = new Float32Array([3, -3, 6, 6]);
  proc.apply(row);
  assertAlmostEquals(row[0], 3 / 1.5, 1e-6); // prompt only: repetition, no presence/frequency
  assertAlmostEquals(row[1], -3 * 1.5 - 1 - 0.5, 1e-6); // prompt and generated once
  assertAlmostEquals(row[2], 6 / 1.5 - 1 - 0.5 * 2, 1e-6); // generated twice
  assertAlmostEquals(row[3], 6, 1e-6); // never seen
});

Deno.test("LogitsProcessor is inactive and leaves logits alone with default params", () => {
  const proc = new LogitsProcessor({}, { promptTokens: [0] });
  proc.record(0);
  assert(!proc.active);
  const row = new Float32Array([1, 2]);
  proc.apply(row);
  assertEquals([...row], [1, 2]);
});

Deno.test("LogitsProcessor rejects a repetition penalty <= 0 and non-finite penalties", () => {
  const err = assertThrows(
    () => new LogitsProcessor({ repetitionPenalty: 0 }),
    ValidationError,
    "repetition_penalty",
  );
  assertEquals(err.param, "repetition_penalty");
  assertThrows(() => new LogitsProcessor({ presencePenalty: Infinity }), ValidationError);
  assertThrows(() => new LogitsProcessor({ frequencyPenalty: Number.NaN }), ValidationError);
});
