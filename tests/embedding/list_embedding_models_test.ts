import { listEmbeddingModels } from "../../src/embedding/list_embedding_models.ts";
import { assert, assertEquals } from "../_assert.ts";

Deno.test("listEmbeddingModels() reports each method's models, default, dims and key variable", () => {
  const list = listEmbeddingModels();
  assertEquals(list.map((m) => m.method), [
    "hf",
    "openai",
    "jina",
    "zhipu",
    "cohere",
    "bedrock",
    "ollama",
    "siliconcloud",
    "hash",
    "mockembedder",
  ]);
  for (const m of list) {
    const def = m.models.find((x) => x.name === m.defaultModel);
    assert(def !== undefined, `${m.method}: default model not listed`);
    assertEquals(m.defaultDimensions, def.dimensions, m.method);
    assertEquals(m.needsKey, m.envVariable !== null, m.method);
    if (m.envVariable !== null) assert(m.envVariables.includes(m.envVariable));
  }
  const byMethod = Object.fromEntries(list.map((m) => [m.method, m]));
  assertEquals(byMethod.jina.envVariable, "JINA_API_KEY");
  assertEquals(byMethod.zhipu.envVariable, "ZHIPUAI_API_KEY");
  assertEquals(byMethod.cohere.envVariable, "COHERE_API_KEY");
  assertEquals(byMethod.siliconcloud.envVariable, "SILICONFLOW_API_KEY");
  assertEquals(byMethod.openai.envVariable, "COMPAT_API_KEY");
  assertEquals(byMethod.bedrock.envVariable, "AWS_ACCESS_KEY_ID");
  assertEquals(byMethod.ollama.needsKey, false);
  assertEquals(byMethod.hash.defaultDimensions, 384);
});

Deno.test("listEmbeddingModels() returns copies that callers may change", () => {
  listEmbeddingModels()[0].models.length = 0;
  assert(listEmbeddingModels()[0].models.length > 0);
});
