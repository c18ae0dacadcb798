import { ValidationError } from "../../src/core/errors.ts";
import {
  parseEmbeddingRequest,
  toEmbeddingJob,
  toEmbedInputs,
  toEmbedOptions,
} from "../../src/protocol/embedding_request.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

const MODEL = { dimensions: 8, maxTokens: 64 };

function rejects(body: unknown, param: string | null, includes?: string): void {
  const err = assertThrows(() => parseEmbeddingRequest(body), ValidationError, includes);
  assertEquals(err.param, param);
}

Deno.test("toEmbedInputs() keeps every input shape in order", () => {
  const cases: [unknown, unknown][] = [
    ["a", ["a"]],
    [["a", "b"], ["a", "b"]],
    [[1, 2], [[1, 2]]],
    [[[1], [2]], [[1], [2]]],
  ];
  for (const [input, expected] of cases) {
    assertEquals(
      toEmbedInputs(parseEmbeddingRequest({ model: "m", input }).input) as unknown,
      expected,
    );
  }
});

Deno.test("parseEmbeddingRequest() validates input, encoding_format and dimensions", () => {
  rejects({ model: "m" }, "input");
  rejects({ model: "m", input: [] }, "input");
  rejects({ model: "m", input: [1.5] }, "input.0");
  rejects({ model: "m", input: ["a", null] }, "input.1");
  rejects({ model: "m", input: "a", encoding_format: "int8" }, "encoding_format");
  rejects({ model: "m", input: "a", dimensions: 0 }, "dimensions");
  rejects({ model: "m", input: "a", truncate: "yes" }, "truncate");
  rejects({ model: "m", input: "a", truncate_prompt_tokens: 0 }, "truncate_prompt_tokens");
  rejects({ model: "m", input: "a", truncate_prompt_tokens: -2 }, "truncate_prompt_tokens");
  const ok = parseEmbeddingRequest({
    model: "m",
    input: "a",
    encoding_format: "base64",
    dimensions: 4,
    user: "u",
  });
  assertEquals(ok.encoding_format, "base64");
});

Deno.test("toEmbedOptions() passes dimensions and refuses more than the model has", () => {
  assertEquals(toEmbedOptions(parseEmbeddingRequest({ model: "m", input: "a" }), MODEL), {});
  assertEquals(
    toEmbedOptions(parseEmbeddingRequest({ model: "m", input: "a", dimensions: 4 }), MODEL),
    { dimensions: 4 },
  );
  const err = assertThrows(
    () => toEmbedOptions(parseEmbeddingRequest({ model: "m", input: "a", dimensions: 9 }), MODEL),
    ValidationError,
    "ask for 8 or fewer",
  );
  assertEquals(err.param, "dimensions");
});

Deno.test("toEmbedOptions() maps truncate, truncate_prompt_tokens and truncation_side", () => {
  const opts = (extra: object) =>
    toEmbedOptions(parseEmbeddingRequest({ model: "m", input: "a", ...extra }), MODEL);
  assertEquals(opts({ truncate: true }), { truncate: true });
  assertEquals(opts({ truncate: false }), {});
  assertEquals(opts({ truncate_prompt_tokens: -1 }), { truncate: true });
  assertEquals(opts({ truncate_prompt_tokens: 64 }), { truncate: true });
  assertEquals(opts({ truncate_prompt_tokens: 10 }), { truncate: true, truncateTokens: 10 });
  assertEquals(opts({ truncate_prompt_tokens: 10, truncation_side: "left" }), {
    truncate: true,
    truncateTokens: 10,
    truncationSide: "left",
  });
  assertEquals(opts({ truncate: true, truncation_side: "right" }), { truncate: true });
  assertEquals(opts({ truncation_side: "left" }), {});
  // Above the maximum: a 400 naming the limit (vLLM's answer), not a silent cut to it.
  const over = assertThrows(() => opts({ truncate_prompt_tokens: 65 }), ValidationError, "of 64");
  assertEquals(over.param, "truncate_prompt_tokens");
});

Deno.test("toEmbeddingJob() gathers inputs, options and the encoding (float by default)", () => {
  assertEquals(
    toEmbeddingJob(parseEmbeddingRequest({ model: "m", input: "a", dimensions: 2 }), MODEL),
    { inputs: ["a"], options: { dimensions: 2 }, encodingFormat: "float" },
  );
  assertEquals(
    toEmbeddingJob(
      parseEmbeddingRequest({ model: "m", input: [[1]], encoding_format: "base64" }),
      MODEL,
    ).encodingFormat,
    "base64",
  );
});

Deno.test("parseEmbeddingRequest() refuses a field it does not know, naming it", () => {
  rejects(
    { ...{ model: "m", input: "x" }, logit_bias: { "1": 2 } },
    "logit_bias",
    "'logit_bias' is not supported",
  );
});
