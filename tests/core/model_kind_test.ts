import { backendKindOf, engineKindOf, parseModelKind } from "../../src/core/model_kind.ts";
import { assertEquals } from "../_assert.ts";

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
