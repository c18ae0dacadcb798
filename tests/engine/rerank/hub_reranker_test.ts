// Real reranker repositories as hub models, without the network: generated folders in the layout
// of each repository (its config's architecture, inputs and score function, plus files that must
// not be downloaded) are served by the local hub stand-in under the real repository ids, and
// createEngine() must download only what it needs, see a reranker, and score as the config says.
import { assert, assertAlmostEquals, assertEquals } from "../../_assert.ts";
import { join } from "node:path";
import { startHubStandIn } from "../../_helpers/hub_stand_in.ts";
import {
  type RerankerFolderOptions,
  writeRerankerFolder,
} from "../../../src/engine/generated_models/reranker_folder.ts";
import { createEngine, detectKindOf } from "../../../src/engine/create_engine.ts";
import type { RerankEngine } from "../../../src/engine/rerank/rerank_engine.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { TINY_EMBED } from "../generated_models/_fixtures.ts";

setupLogger("error");

interface RepoLayout {
  options: Omit<RerankerFolderOptions, "id">;
  /** config.json fields of the real repository that differ from the generator's. */
  config?: Record<string, unknown>;
  /** Whether its scores are the logits (ms-marco: Identity) or their sigmoid. */
  raw: boolean;
}

const REPOS: Record<string, RepoLayout> = {
  // BertForSequenceClassification with token_type_ids; Identity activation in config.json.
  "Xenova/ms-marco-MiniLM-L-6-v2": { options: { activation: "identity" }, raw: true },
  // XLM-RoBERTa: no token_type_ids input; no activation named, so the sigmoid.
  "BAAI/bge-reranker-base": { options: { layout: "xlm-roberta" }, raw: false },
  // Jina's own BERT class (custom code on the hub; transformers.js goes by model_type "bert").
  "jinaai/jina-reranker-v1-turbo-en": {
    options: {},
    config: { architectures: ["JinaBertForSequenceClassification"] },
    raw: false,
  },
};

Deno.test("real reranker repositories load from the hub as rerankers", async () => {
  const root = await Deno.makeTempDir({ prefix: "svc-hub-rerank-" });
  const repos: Record<string, string> = {};
  for (const [repo, layout] of Object.entries(REPOS)) {
    const folder = join(root, "repos", repo);
    await writeRerankerFolder(folder, { ...TINY_EMBED, seed: 11 }, { id: repo, ...layout.options });
    if (layout.config) {
      const path = join(folder, "config.json");
      const config = JSON.parse(await Deno.readTextFile(path));
      await Deno.writeTextFile(path, JSON.stringify({ ...config, ...layout.config }));
    }
    // Files real repositories carry that an ONNX engine must not fetch.
    await Deno.writeTextFile(join(folder, "pytorch_model.bin"), "not needed");
    await Deno.writeTextFile(join(folder, "onnx", "model_bnb4.onnx"), "not needed");
    repos[repo] = folder;
  }
  const hub = startHubStandIn({ repos });
  const cacheDir = join(root, "cache");
  try {
    for (const [repo, layout] of Object.entries(REPOS)) {
      assertEquals(await detectKindOf(repo), "rerank", `${repo} by its name`);
      const engine = await createEngine(repo, {
        cacheDir,
        device: "cpu",
        hubEndpoint: hub.endpoint,
      }) as RerankEngine;
      try {
        assertEquals(engine.info.kind, "rerank", repo);
        assertEquals(engine.info.ownedBy, repo.split("/")[0]);
        const logits = await engine.rerank("query", ["one doc", "another"], { rawScores: true });
        const scores = await engine.rerank("query", ["one doc", "another"]);
        scores.scores.forEach((s, i) => {
          const l = logits.scores[i];
          assertAlmostEquals(s, layout.raw ? l : 1 / (1 + Math.exp(-l)), 1e-6);
        });
      } finally {
        await engine.dispose();
      }
    }
    const fetched = hub.requests.map((r) => r.path).filter((p) => p.includes("/resolve/"));
    assert(!fetched.some((p) => /pytorch_model|bnb4/.test(p)), fetched.join("\n"));
    // q8 is the CPU default, and only it was downloaded.
    assert(fetched.some((p) => p.endsWith("onnx/model_quantized.onnx")));
    assert(!fetched.some((p) => p.endsWith("onnx/model.onnx")), fetched.join("\n"));
  } finally {
    await hub.close();
    await Deno.remove(root, { recursive: true });
  }
});
