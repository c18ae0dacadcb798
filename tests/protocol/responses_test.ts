import { Buffer } from "node:buffer";
import { buildChatCompletion, buildChatCompletionChunk } from "../../src/protocol/chat_response.ts";
import { buildTextCompletion } from "../../src/protocol/completion_response.ts";
import {
  buildEmbeddingList,
  decodeFloat32Base64,
  encodeFloat32Base64,
} from "../../src/protocol/embedding_response.ts";
import { buildModel, buildModelList } from "../../src/protocol/model_response.ts";
import { buildUsage } from "../../src/protocol/usage.ts";
import type { TokenLogprob } from "../../src/core/inference_types.ts";
import { assertEquals } from "../_assert.ts";

const META = { id: "id-1", created: 1234, model: "m" };
const LP: TokenLogprob = {
  token: "hi",
  logprob: -0.5,
  bytes: [104, 105],
  topLogprobs: [{ token: "ho", logprob: -1, bytes: [104, 111] }],
};

Deno.test("buildUsage() adds the total and the cached prompt tokens", () => {
  assertEquals(buildUsage({ promptTokens: 3, completionTokens: 4 }), {
    prompt_tokens: 3,
    completion_tokens: 4,
    total_tokens: 7,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  assertEquals(
    buildUsage({ promptTokens: 30, completionTokens: 4, cachedTokens: 16 }).prompt_tokens_details,
    { cached_tokens: 16 },
  );
});

Deno.test("buildChatCompletion() builds OpenAI's chat.completion object", () => {
  const body = buildChatCompletion(META, [
    { index: 0, text: "hi", finishReason: "stop", logprobs: [LP] },
    { index: 1, text: "yo", finishReason: "length" },
  ], { usage: { promptTokens: 2, completionTokens: 2 } });
  assertEquals(body, {
    id: "id-1",
    object: "chat.completion",
    created: 1234,
    model: "m",
    system_fingerprint: null,
    service_tier: "default",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "hi", refusal: null },
        logprobs: {
          content: [{
            token: "hi",
            logprob: -0.5,
            bytes: [104, 105],
            top_logprobs: [{ token: "ho", logprob: -1, bytes: [104, 111] }],
          }],
          refusal: null,
        },
        finish_reason: "stop",
      },
      {
        index: 1,
        message: { role: "assistant", content: "yo", refusal: null },
        logprobs: null,
        finish_reason: "length",
      },
    ],
    usage: {
      prompt_tokens: 2,
      completion_tokens: 2,
      total_tokens: 4,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  });
});

Deno.test("buildChatCompletionChunk() builds role, content, finish and usage chunks", () => {
  const role = buildChatCompletionChunk(META, [{ index: 0, role: "assistant", content: "" }]);
  assertEquals(role.object, "chat.completion.chunk");
  assertEquals(role.choices, [{
    index: 0,
    delta: { role: "assistant", content: "" },
    logprobs: null,
    finish_reason: null,
  }]);
  assertEquals("usage" in role, false);
  const content = buildChatCompletionChunk(META, [{ index: 2, content: "x" }], {
    includeUsage: true,
  });
  assertEquals(content.choices[0].delta, { content: "x" });
  assertEquals(content.usage, null);
  const finish = buildChatCompletionChunk(META, [{ index: 0, finishReason: "length" }]);
  assertEquals(finish.choices[0].delta, {});
  assertEquals(finish.choices[0].finish_reason, "length");
  const usage = buildChatCompletionChunk(META, [], {
    usage: { promptTokens: 1, completionTokens: 2 },
  });
  assertEquals(usage.choices, []);
  assertEquals(usage.usage, {
    prompt_tokens: 1,
    completion_tokens: 2,
    total_tokens: 3,
    prompt_tokens_details: { cached_tokens: 0 },
  });
});

Deno.test("buildTextCompletion() builds text_completion with legacy logprobs", () => {
  const lp2: TokenLogprob = { ...LP, token: " there", topLogprobs: [] };
  const body = buildTextCompletion(META, [
    {
      index: 0,
      text: "hi there",
      finishReason: "stop",
      logprobs: [LP, lp2],
      withTopLogprobs: true,
    },
  ], { usage: { promptTokens: 1, completionTokens: 2 } });
  assertEquals(body.object, "text_completion");
  // top_logprobs is made as it is written: compared as the client reads it.
  assertEquals(JSON.parse(JSON.stringify(body.choices[0].logprobs)), {
    tokens: ["hi", " there"],
    token_logprobs: [-0.5, -0.5],
    // The sampled token is among its top_logprobs, as OpenAI and vLLM answer.
    top_logprobs: [{ ho: -1, hi: -0.5 }, { " there": -0.5 }],
    text_offset: [0, 2],
  });
  assertEquals(body.usage?.total_tokens, 3);
  const chunk = buildTextCompletion(META, [
    { index: 1, text: "x", logprobs: [LP], textOffset: 5 },
  ], { includeUsage: true });
  assertEquals(chunk.choices[0].finish_reason, null);
  assertEquals(chunk.choices[0].logprobs?.text_offset, [5]);
  assertEquals(chunk.choices[0].logprobs?.top_logprobs, null);
  assertEquals(chunk.usage, null);
});

Deno.test("encodeFloat32Base64() writes little-endian float32 that Buffer decodes as the SDK does", () => {
  const vector = new Float32Array([1, -0.5, 0.1, 3.4028234663852886e38, 1e-45, 0]);
  const text = encodeFloat32Base64(vector);
  assertEquals(encodeFloat32Base64(new Float32Array([1])), "AACAPw==");
  // The official SDK's decoding: Buffer.from(base64) viewed as a Float32Array.
  const buf = Buffer.from(text, "base64");
  const sdk = Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4));
  assertEquals(sdk, Array.from(vector));
  assertEquals(Array.from(decodeFloat32Base64(text)), Array.from(vector));
  // Long vectors (over the chunk size used for String.fromCharCode) round-trip too.
  const long = new Float32Array(20_000).map((_, i) => Math.sin(i));
  assertEquals(decodeFloat32Base64(encodeFloat32Base64(long)), long);
});

Deno.test("buildEmbeddingList() sends floats or base64 in input order", () => {
  const vectors = [new Float32Array([0.6, 0.8]), new Float32Array([1, 0])];
  const floats = buildEmbeddingList("e", vectors, { promptTokens: 3 });
  assertEquals(floats, {
    object: "list",
    data: [
      { object: "embedding", index: 0, embedding: Array.from(vectors[0]) },
      { object: "embedding", index: 1, embedding: [1, 0] },
    ],
    model: "e",
    usage: { prompt_tokens: 3, total_tokens: 3 },
  });
  const b64 = buildEmbeddingList("e", vectors, { promptTokens: 3, encodingFormat: "base64" });
  assertEquals(decodeFloat32Base64(b64.data[0].embedding as string), vectors[0]);
});

Deno.test("buildModel() and buildModelList() describe models with their kind", () => {
  const model = buildModel({
    id: "demo/embed",
    kind: "embedding",
    contextLength: 512,
    dimensions: 384,
    created: 5,
    ownedBy: "svc",
    randomWeights: true,
  }, { id: "alias" });
  assertEquals(model, {
    id: "alias",
    object: "model",
    created: 5,
    owned_by: "svc",
    kind: "embedding",
    max_model_len: 512,
    dimensions: 384,
    random_weights: true,
  });
  assertEquals(buildModelList([model]), { object: "list", data: [model] });
});
