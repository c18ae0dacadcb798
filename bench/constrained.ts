/**
 * Constrained decoding vs free decoding on `demo/chat-bench` (SmolLM2-135M shape, vocabulary
 * 49152, random weights), in process (no HTTP), at 1 and 16 concurrent streams.
 *
 * Three modes run interleaved in every round (their order rotates), each stream generating
 * `--max-tokens` tokens at temperature 1 with its own seed:
 * - `free`: no constraint;
 * - `json string`: a JSON Schema whose one string must be longer than the budget, so decoding
 *   stays inside a string (the plain-token path);
 * - `json structure`: an array of at least 100 small objects (integer, enum, boolean), so nearly
 *   every token is structural and most steps need a mask (random weights rarely pick a valid
 *   token on their own, the worst case for the lazy check).
 * Both schemas cannot finish within the budget, so every mode generates exactly the same number of
 * tokens. Reported: aggregate tokens/s (median over rounds) and each constrained mode's share of
 * the free mode's. Then, without the model, the host cost of choosing one token (sampler plus
 * constraint) over random logits rows of the same vocabulary, per mode: the part constrained
 * decoding adds, apart from the machine's noise.
 *
 * Run: `deno run -A bench/constrained.ts [--repeats 5] [--max-tokens 64] [--json out.json]`
 *
 * @module
 */

import { parseArgs } from "node:util";
import { createEngine } from "../src/engine/create_engine.ts";
import { collect } from "../src/engine/chat/chat_engine.ts";
import type { GenerationEngine, SamplingParams } from "../src/core/inference_types.ts";
import { OutputPaths } from "../src/config/output_paths.ts";
import { setupLogger } from "../src/core/logging.ts";
import { median } from "./_stats.ts";
import { SequenceSampler } from "../src/engine/decoding/sampler.ts";
import { compileSchema } from "../src/engine/constrained/schema_compiler.ts";
import { ConstrainedGrammar, TokenConstraint } from "../src/engine/constrained/token_constraint.ts";
import { Vocabulary } from "../src/engine/constrained/vocabulary.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import { Rng } from "../src/engine/decoding/rng.ts";

const STRING_SCHEMA = {
  type: "object",
  properties: { text: { type: "string", minLength: 5000 } },
  required: ["text"],
  additionalProperties: false,
};
const STRUCTURE_SCHEMA = {
  type: "array",
  items: {
    type: "object",
    properties: {
      id: { type: "integer", minimum: 0, maximum: 999 },
      tag: { enum: ["red", "green", "blue"] },
      ok: { type: "boolean" },
    },
    required: ["id", "tag", "ok"],
    additionalProperties: false,
  },
  minItems: 100,
};
const MODES: Record<string, SamplingParams> = {
  "free": {},
  "json string": { responseFormat: { type: "json_schema", schema: STRING_SCHEMA } },
  "json structure": { responseFormat: { type: "json_schema", schema: STRUCTURE_SCHEMA } },
};
const PROMPT = {
  messages: [{ role: "user" as const, content: "List the colours of the items in the box." }],
};

async function round(
  engine: GenerationEngine,
  streams: number,
  params: SamplingParams,
  maxTokens: number,
): Promise<number> {
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: streams }, async (_, i) => {
    const stream = await engine.generate(PROMPT, {
      ...params,
      temperature: 1,
      seed: i + 1,
      maxTokens,
    });
    return await collect(stream);
  }));
  const seconds = (performance.now() - started) / 1000;
  const tokens = results.reduce((sum, r) => sum + r.completionTokens, 0);
  if (results.some((r) => r.finishReason !== "length")) {
    throw new Error("a generation ended before max_tokens: the modes would not be comparable");
  }
  return tokens / seconds;
}

// Microseconds to choose one token from a random logits row (normal, std 3, like the demo model's),
// median over `rounds` runs of `steps` tokens.
async function hostCostPerToken(cacheDir: string, steps: number): Promise<Record<string, number>> {
  const folder = await materializeDemoModel("demo/chat-bench", cacheDir);
  const json = JSON.parse(await Deno.readTextFile(`${folder}/tokenizer.json`));
  const vocab = Vocabulary.fromTokenizerJson(json, 49152);
  const rng = new Rng(1);
  const rows = Array.from({ length: 64 }, () => {
    const row = new Float32Array(vocab.size);
    for (let i = 0; i < row.length; i++) {
      row[i] = 3 * Math.sqrt(-2 * Math.log(1 - rng.nextFloat())) *
        Math.cos(2 * Math.PI * rng.nextFloat());
    }
    return row;
  });
  const grammars: Record<string, ConstrainedGrammar | null> = {
    "free": null,
    "json string": new ConstrainedGrammar(compileSchema(STRING_SCHEMA), vocab),
    "json structure": new ConstrainedGrammar(compileSchema(STRUCTURE_SCHEMA), vocab),
  };
  const out: Record<string, number> = {};
  for (const [name, grammar] of Object.entries(grammars)) {
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      const sampler = new SequenceSampler({ temperature: 1, seed: round });
      let constraint = grammar ? new TokenConstraint(grammar, new Set([0])) : undefined;
      const started = performance.now();
      for (let step = 0; step < steps; step++) {
        // A fresh sequence every 64 tokens, as requests of max_tokens 64 would be.
        if (grammar && step % 64 === 0) constraint = new TokenConstraint(grammar, new Set([0]));
        const { tokenId } = sampler.sample(rows[step % rows.length], constraint);
        constraint?.advance(tokenId);
      }
      times.push((performance.now() - started) * 1000 / steps);
    }
    out[`${name} µs/token`] = median(times);
  }
  return out;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      repeats: { type: "string", default: "5" },
      "host-only": { type: "boolean", default: false },
      "max-tokens": { type: "string", default: "64" },
      json: { type: "string" },
    },
  });
  const repeats = Number(values.repeats);
  const maxTokens = Number(values["max-tokens"]);
  setupLogger("error");
  const engine = await createEngine("demo/chat-bench", {
    kind: "chat",
    cacheDir: OutputPaths.resolve().cache,
    device: "cpu",
    dtype: "q8",
  });
  const names = Object.keys(MODES);
  const report: Record<string, Record<string, number>> = {};
  try {
    for (const streams of values["host-only"] ? [] : [1, 16]) {
      // Warm-up: loads the vocabulary, compiles the grammars, fills their mask caches a little.
      for (const name of names) await round(engine, streams, MODES[name], 8);
      const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let r = 0; r < repeats; r++) {
        for (let k = 0; k < names.length; k++) {
          const name = names[(r + k) % names.length];
          samples[name].push(await round(engine, streams, MODES[name], maxTokens));
        }
      }
      const free = median(samples.free);
      report[`${streams} stream${streams > 1 ? "s" : ""}`] = Object.fromEntries(
        names.flatMap((n) => {
          const tps = median(samples[n]);
          return n === "free"
            ? [[`${n} tokens/s`, tps]]
            : [[`${n} tokens/s`, tps], [`${n} vs free`, tps / free]];
        }),
      );
      console.log(streams, JSON.stringify(report[`${streams} stream${streams > 1 ? "s" : ""}`]));
    }
  } finally {
    await engine.dispose();
  }
  report["host cost per token"] = await hostCostPerToken(OutputPaths.resolve().cache, 2048);
  console.log(JSON.stringify(report["host cost per token"]));
  if (values.json) await Deno.writeTextFile(values.json, JSON.stringify(report, null, 2));
}
