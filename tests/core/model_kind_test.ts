import { assert, assertEquals, assertMatch, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import {
  backendKindOf,
  engineKindOf,
  engineOfKind,
  isEngineOfKind,
  modelKindError,
  parseModelKind,
} from "../../src/core/model_kind.ts";
import type { InferenceEngine } from "../../src/core/inference_types.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";

Deno.test("backendKindOf() and engineKindOf() translate chat <-> llm, the rest to embedding", () => {
  assertEquals(backendKindOf("chat"), "llm");
  assertEquals(backendKindOf("embedding"), "embedding");
  assertEquals(backendKindOf("rerank"), "embedding");
  assertEquals(engineKindOf("llm"), "chat");
  assertEquals(engineKindOf("embedding"), "embedding");
});

Deno.test("parseModelKind() reads every kind word and llm as chat", () => {
  assertEquals(parseModelKind("chat"), "chat");
  assertEquals(parseModelKind("llm"), "chat");
  assertEquals(parseModelKind("rerank"), "rerank");
  assertEquals(parseModelKind("embedding"), "embedding");
  assertEquals(parseModelKind("vision"), undefined);
  assertEquals(parseModelKind(3), undefined);
});

Deno.test("modelKindError() is a 400 invalid_model_kind on model that names the right endpoint", () => {
  const err = modelKindError({ id: "m", kind: "rerank" }, "embedding");
  assert(err instanceof ValidationError);
  assertEquals([err.code, err.param], ["invalid_model_kind", "model"]);
  assertEquals(
    err.message,
    "The model 'm' is a reranker (cross-encoder) model and cannot serve this endpoint; call " +
      "/v1/rerank with it, or pick an embedding model.",
  );
});

Deno.test("isEngineOfKind() and engineOfKind() narrow an engine by info.kind", async () => {
  const engine: InferenceEngine = new FakeEngine({ kind: "embedding", dimensions: 4 });
  assert(isEngineOfKind(engine, "embedding"));
  assert(!isEngineOfKind(engine, "chat"));
  const { vectors } = await engineOfKind(engine, "embedding").embed(["x"]);
  assertEquals(vectors[0].length, 4);
  const err = assertThrows(
    () => engineOfKind(engine, "chat", { model: "alias" }),
    ValidationError,
  );
  assertEquals(err.code, "invalid_model_kind");
  assertMatch(err.message, /^The model 'alias' is an embedding model /);
});
