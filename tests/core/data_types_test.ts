import { assert, assertEquals, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import {
  createBatch,
  createInferenceResult,
  createMessage,
  createRecord,
  createUsage,
  validateBatch,
  validateInferenceResult,
  validateMessage,
  validateRecord,
} from "../../src/core/data_types.ts";

/** Asserts `fn` raises ValidationError whose param is `field`. */
function assertBadField(fn: () => unknown, field: string, messageIncludes?: string): void {
  const err = assertThrows(fn, ValidationError, messageIncludes);
  assertEquals(err.param, field, err.message);
}

Deno.test("createMessage() builds a message stamped with the current time", () => {
  const before = Date.now();
  const msg = createMessage("user-1", { text: "hi" });
  assertEquals(msg.key, "user-1");
  assertEquals(msg.value, { text: "hi" });
  assert(Number.isInteger(msg.timestamp) && msg.timestamp >= before && msg.timestamp <= Date.now());
  assertEquals(createMessage("k", {}, { timestamp: 5 }).timestamp, 5);
});

Deno.test("validateMessage() accepts a message that went through JSON", () => {
  const msg = createMessage("k", { n: [1, 2] }, { timestamp: 1_700_000_000_000 });
  assertEquals(validateMessage(JSON.parse(JSON.stringify(msg))), msg);
});

Deno.test("validateMessage() names the bad field", () => {
  assertBadField(() => validateMessage({ key: "", value: {}, timestamp: 1 }), "key", "Message.key");
  assertBadField(() => validateMessage({ key: 3, value: {}, timestamp: 1 }), "key");
  assertBadField(() => validateMessage({ key: "k", value: "text", timestamp: 1 }), "value");
  assertBadField(
    () => validateMessage({ key: "k", value: [1], timestamp: 1 }),
    "value",
    "an array",
  );
  assertBadField(() => validateMessage({ key: "k", value: null, timestamp: 1 }), "value", "null");
  assertBadField(
    () => validateMessage({ key: "k", value: {}, timestamp: 1.5 }),
    "timestamp",
    "1.5",
  );
  assertBadField(() => validateMessage({ key: "k", value: {} }), "timestamp");
  assertBadField(() => createMessage("k", {}, { timestamp: -1 }), "timestamp");
  assertThrows(() => validateMessage(null), ValidationError, "Message must be an object, got null");
  assertThrows(() => validateMessage([]), ValidationError, "an array");
});

Deno.test("createRecord() and validateRecord() accept any data with object metadata", () => {
  assertEquals(createRecord("text"), { data: "text", metadata: {} });
  assertEquals(createRecord(null, { source: "csv" }), { data: null, metadata: { source: "csv" } });
  assertEquals(validateRecord({ data: [1], metadata: {} }), { data: [1], metadata: {} });
});

Deno.test("validateRecord() names the bad field", () => {
  assertBadField(() => validateRecord({ metadata: {} }), "data", "Record.data");
  assertBadField(() => validateRecord({ data: 1, metadata: "x" }), "metadata", "Record.metadata");
  assertBadField(() => validateRecord({ data: 1 }), "metadata");
  assertThrows(() => validateRecord("x"), ValidationError, "Record must be an object");
});

Deno.test("createBatch() fills id, createdAt and metadata", () => {
  const batch = createBatch(["a", "b"]);
  assertEquals(batch.items, ["a", "b"]);
  assertEquals(batch.metadata, {});
  assert(/^[0-9a-f-]{36}$/.test(batch.id));
  assert(batch.createdAt <= Date.now());
  assert(createBatch([]).id !== batch.id);
  const fixed = createBatch([1], { id: "b1", createdAt: 10, metadata: { model: "m" } });
  assertEquals(fixed, { id: "b1", items: [1], createdAt: 10, metadata: { model: "m" } });
});

Deno.test("validateBatch() names the bad field and checks items with a validator", () => {
  const ok = { id: "b", items: [], createdAt: 0, metadata: {} };
  assertEquals(validateBatch(ok), ok);
  assertBadField(() => validateBatch({ ...ok, id: "" }), "id");
  assertBadField(() => validateBatch({ ...ok, items: "x" }), "items");
  assertBadField(() => validateBatch({ ...ok, createdAt: "now" }), "createdAt");
  assertBadField(() => validateBatch({ ...ok, metadata: null }), "metadata");
  const messages = [createMessage("a", {}), { key: "b", value: {}, timestamp: -3 }];
  assertBadField(
    () => validateBatch({ ...ok, items: messages }, validateMessage),
    "items[1]",
    "Batch.items[1] is invalid: Message.timestamp",
  );
  assertEquals(validateBatch({ ...ok, items: [messages[0]] }, validateMessage).items.length, 1);
});

Deno.test("createUsage() sums the total and rejects bad counts", () => {
  assertEquals(createUsage(12, 30), { promptTokens: 12, completionTokens: 30, totalTokens: 42 });
  assertEquals(createUsage(5), { promptTokens: 5, completionTokens: 0, totalTokens: 5 });
  assertBadField(() => createUsage(-1, 0), "usage.promptTokens");
  assertBadField(() => createUsage(1, 0.5), "usage.completionTokens");
});

Deno.test("createInferenceResult() builds chat, generate and embed results", () => {
  const chat = createInferenceResult({
    kind: "chat",
    model: "demo",
    output: "Hello!",
    finishReason: "stop",
    latencyMs: 41.5,
    usage: { promptTokens: 9, completionTokens: 3 },
  });
  assertEquals(chat.usage, { promptTokens: 9, completionTokens: 3, totalTokens: 12 });
  assertEquals(chat.output, "Hello!");
  const gen = createInferenceResult({
    kind: "generate",
    model: "demo",
    output: "",
    finishReason: "length",
    latencyMs: 0,
    usage: { promptTokens: 1, completionTokens: 16, totalTokens: 17 },
  });
  assertEquals(gen.kind, "generate");
  const embed = createInferenceResult({
    kind: "embed",
    model: "minilm",
    output: [[0.1, 0.2], [0.3, -0.4]],
    latencyMs: 3,
    usage: { promptTokens: 6 },
  });
  assertEquals(embed.usage.totalTokens, 6);
  assertEquals(validateInferenceResult(JSON.parse(JSON.stringify(embed))), embed);
});

Deno.test("validateInferenceResult() names the bad field", () => {
  const chat = {
    kind: "chat",
    model: "m",
    output: "hi",
    latencyMs: 1,
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  };
  const embed = { ...chat, kind: "embed", output: [[1, 2], [3, 4]] };
  assertEquals(validateInferenceResult(chat).kind, "chat");
  assertBadField(() => validateInferenceResult({ ...chat, kind: "classify" }), "kind");
  assertBadField(() => validateInferenceResult({ ...chat, model: "" }), "model");
  assertBadField(() => validateInferenceResult({ ...chat, output: ["hi"] }), "output");
  assertBadField(() => validateInferenceResult({ ...chat, finishReason: "done" }), "finishReason");
  assertBadField(() => validateInferenceResult({ ...chat, latencyMs: -1 }), "latencyMs");
  assertBadField(() => validateInferenceResult({ ...chat, latencyMs: NaN }), "latencyMs");
  assertBadField(() => validateInferenceResult({ ...chat, usage: null }), "usage");
  assertBadField(
    () => validateInferenceResult({ ...chat, usage: { ...chat.usage, totalTokens: 5 } }),
    "usage.totalTokens",
    "promptTokens + completionTokens (2)",
  );
  assertBadField(() => validateInferenceResult({ ...embed, output: "x" }), "output");
  assertBadField(
    () => validateInferenceResult({ ...embed, output: [[1, 2], [3]] }),
    "output[1]",
    "length 2",
  );
  assertBadField(() => validateInferenceResult({ ...embed, output: [[1, NaN]] }), "output[0]");
  assertBadField(() => validateInferenceResult({ ...embed, finishReason: "stop" }), "finishReason");
  assertThrows(
    () => validateInferenceResult(undefined),
    ValidationError,
    "InferenceResult must be",
  );
});
