import { assert, assertEquals, assertRejects } from "../../_assert.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import {
  DEMO_MODEL_IDS,
  DEMO_MODEL_SPECS,
  demoModelFolder,
  isDemoModelId,
  materializeDemoModel,
} from "../../../src/engine/generated_models/demo_models.ts";
import { setUpTransformers } from "./_fixtures.ts";

Deno.test("DEMO_MODEL_IDS are the five demo ids and isDemoModelId() knows them", () => {
  assertEquals([...DEMO_MODEL_IDS], [
    "demo/chat",
    "demo/embed",
    "demo/chat-bench",
    "demo/embed-bench",
    "demo/rerank",
  ]);
  assert(DEMO_MODEL_IDS.every(isDemoModelId));
  assert(!isDemoModelId("demo/other") && !isDemoModelId("Xenova/all-MiniLM-L6-v2"));
  assertEquals(DEMO_MODEL_SPECS["demo/chat-bench"].spec.hiddenSize, 576);
  assertEquals(DEMO_MODEL_SPECS["demo/embed-bench"].spec.vocabSize, 30522);
});

Deno.test("materializeDemoModel() rejects an id that is not a demo model", async () => {
  await assertRejects(
    () => materializeDemoModel("demo/nope", "/nonexistent"),
    ValidationError,
    "demo/chat",
  );
});

Deno.test("materializeDemoModel() writes once, reuses the folder, and rebuilds an outdated one", async () => {
  const cache = await Deno.makeTempDir({ prefix: "svc-demo-cache-" });
  try {
    // Concurrent first calls share one build.
    const [folder, again] = await Promise.all([
      materializeDemoModel("demo/embed", cache),
      materializeDemoModel("demo/embed", cache),
    ]);
    assertEquals(folder, `${cache}/demo/embed`);
    assertEquals(again, folder);
    assertEquals(demoModelFolder("demo/embed", cache), folder);
    const names = [];
    for await (const e of Deno.readDir(`${cache}/demo`)) names.push(e.name);
    assertEquals(names, ["embed"]); // no temp folders left behind
    const onnx = `${folder}/onnx/model.onnx`;
    const first = (await Deno.stat(onnx)).mtime;
    await new Promise((r) => setTimeout(r, 20));
    assertEquals(await materializeDemoModel("demo/embed", cache), folder);
    assertEquals((await Deno.stat(onnx)).mtime, first, "a current folder is reused as it is");

    // A stamp from another generator version: the folder is rebuilt.
    await Deno.writeTextFile(`${folder}/svc_demo.json`, '{"generator_version":0}');
    await Deno.remove(`${folder}/onnx/model_quantized.onnx`);
    await materializeDemoModel("demo/embed", cache);
    assert((await Deno.stat(onnx)).mtime! > first!, "an outdated folder is rebuilt");
    await Deno.stat(`${folder}/onnx/model_quantized.onnx`);
    assertEquals(JSON.parse(await Deno.readTextFile(`${folder}/svc_demo.json`)).id, "demo/embed");
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("materializeDemoModel() removes build folders a killed process left an hour ago or more", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "svc-demo-stale-" });
  try {
    const parent = `${cacheDir}/demo`;
    await Deno.mkdir(parent, { recursive: true });
    const left = `${parent}/.embed.tmp-killed`; // a second Ctrl-C while it was built
    const building = `${parent}/.embed.tmp-now`; // another process building right now
    const other = `${parent}/.chat.tmp-killed`; // another model's: its own build clears it
    for (const dir of [left, building, other]) {
      await Deno.mkdir(dir);
      await Deno.writeTextFile(`${dir}/model.onnx`, "partial");
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await Deno.utime(left, twoHoursAgo, twoHoursAgo);
    await Deno.utime(other, twoHoursAgo, twoHoursAgo);
    await materializeDemoModel("demo/embed", cacheDir);
    const names = [];
    for await (const e of Deno.readDir(parent)) names.push(e.name);
    assertEquals(names.sort(), [".chat.tmp-killed", ".embed.tmp-now", "embed"]);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("materializeDemoModel() gives tiny models that say they have random weights and run", async () => {
  const { pipeline } = setUpTransformers();
  const cache = await Deno.makeTempDir({ prefix: "svc-demo-cache-" });
  try {
    for (const id of ["demo/chat", "demo/embed"] as const) {
      const folder = await materializeDemoModel(id, cache);
      const config = JSON.parse(await Deno.readTextFile(`${folder}/config.json`));
      assertEquals(config.svc_random_weights, true);
      assertEquals(config.svc_generator.id, id);
      assert((await Deno.readTextFile(`${folder}/README.md`)).includes("RANDOM WEIGHTS"));
      for (
        const file of [
          "tokenizer.json",
          "tokenizer_config.json",
          "onnx/model.onnx",
          "onnx/model_quantized.onnx",
        ]
      ) {
        await Deno.stat(`${folder}/${file}`);
      }
    }
    const chat = await pipeline("text-generation", `${cache}/demo/chat`, {
      device: "cpu",
      dtype: "q8",
    });
    try {
      const out = await chat([{ role: "user", content: "Hello!" }], {
        max_new_tokens: 5,
        do_sample: false,
      });
      const messages =
        (out as unknown as { generated_text: { role: string }[] }[])[0].generated_text;
      assertEquals(messages.at(-1)!.role, "assistant");
    } finally {
      await chat.dispose();
    }
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});
