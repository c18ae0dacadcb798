// A sentence-transformers model with a Dense module, downloaded from the hub stand-in: the module
// folder comes along and the engine applies it, as it does on the local folder.
import { assert, assertEquals } from "../../_assert.ts";
import { join } from "node:path";
import { startHubStandIn } from "../../_helpers/hub_stand_in.ts";
import { writeEncoderCase } from "../../../fixtures/generated_models/conformance_encoders.ts";
import { createEngine } from "../../../src/engine/create_engine.ts";
import type { EmbeddingEngine } from "../../../src/engine/embedding/embedding_engine.ts";

Deno.test("createEngine() downloads a model's 2_Dense module and applies it like the local folder", async () => {
  const root = await Deno.makeTempDir({ prefix: "svc-hub-dense-" });
  const folder = join(root, "repo");
  await writeEncoderCase(folder, "dense_tanh");
  await using hub = startHubStandIn({ repos: { "conf/dense": { folder } } });
  const options = { cacheDir: join(root, "cache"), device: "cpu", dtype: "fp32" } as const;
  const fromHub = await createEngine("conf/dense", {
    ...options,
    hubEndpoint: hub.endpoint,
  }) as EmbeddingEngine;
  const local = await createEngine(folder, options) as EmbeddingEngine;
  try {
    assertEquals(fromHub.info.dimensions, 24);
    const texts = ["dense layers", "come along"];
    const a = (await fromHub.embed(texts)).vectors;
    const b = (await local.embed(texts)).vectors;
    for (let i = 0; i < texts.length; i++) {
      assertEquals(a[i].length, 24);
      assert(a[i].every((v, d) => Math.abs(v - b[i][d]) < 1e-6), `text ${i}`);
    }
    const fetched = hub.requests.map((r) => r.path);
    assert(fetched.some((p) => p.endsWith("2_Dense/model.safetensors")), fetched.join(", "));
  } finally {
    await fromHub.dispose();
    await local.dispose();
    await Deno.remove(root, { recursive: true });
  }
});
