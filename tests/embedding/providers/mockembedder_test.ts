import { createMockEmbedder } from "../../../src/embedding/providers/mockembedder.ts";
import { assertAlmostEquals, assertEquals, assertNotEquals } from "../../_assert.ts";

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

Deno.test("createMockEmbedder() gives the same unit vector for the same seed and text", async () => {
  const a = await createMockEmbedder({ seed: 7, dimensions: 32 }).embed("hello");
  const b = await createMockEmbedder({ seed: 7, dimensions: 32 }).embed("hello");
  assertEquals(a, b);
  assertEquals(a.length, 32);
  assertAlmostEquals(norm(a), 1, 1e-12);
});

Deno.test("createMockEmbedder() changes the vector with the seed or the text", async () => {
  const base = await createMockEmbedder({ seed: 7 }).embed("hello");
  assertEquals(base.length, 384);
  assertNotEquals(await createMockEmbedder({ seed: 8 }).embed("hello"), base);
  assertNotEquals(await createMockEmbedder({ seed: 7 }).embed("hello!"), base);
});

Deno.test("createMockEmbedder() gives identical vectors in another Deno process", async () => {
  const embedder = createMockEmbedder({ seed: "cross-process", dimensions: 16 });
  const texts = ["alpha", "βeta 你好", ""];
  const here = await embedder.embedBatch(texts);
  const moduleUrl =
    new URL("../../../src/embedding/providers/mockembedder.ts", import.meta.url).href;
  const code = `const { createMockEmbedder } = await import(${JSON.stringify(moduleUrl)});
const e = createMockEmbedder({ seed: "cross-process", dimensions: 16 });
console.log(JSON.stringify(await e.embedBatch(${JSON.stringify(texts)})));`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assertEquals(output.code, 0, stderr);
  const there = JSON.parse(new TextDecoder().decode(output.stdout));
  assertEquals(there, here);
});
