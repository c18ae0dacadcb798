// Load-time checks and prefill bounds of the chat engine on conformance decoders: a model whose
// inputs we cannot feed is refused at load, never served; a model that returns logits for every
// prompt position is prefilled in chunks that keep those logits bounded, without changing output.
import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../../_assert.ts";
import { writeDecoderCase } from "../../../fixtures/generated_models/conformance_decoders.ts";
import { OnnxGraph } from "../../../src/engine/generated_models/onnx_graph.ts";
import { TensorDataType } from "../../../src/engine/generated_models/onnx_proto.ts";
import { writeOnnxModel } from "../../../src/engine/generated_models/onnx_writer.ts";
import { createEngine } from "../../../src/engine/create_engine.ts";
import { ChatEngine, collect } from "../../../src/engine/chat/chat_engine.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import type { PlainTensor } from "../../../src/engine/onnx_session.ts";
import { startEngineServer } from "../../../src/server/engine_server.ts";
import { setupLogger } from "../../../src/core/logging.ts";

setupLogger("error");

async function withCase(name: string, fn: (folder: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "svc-decoder-plan-" });
  try {
    const folder = join(root, name);
    await writeDecoderCase(folder, name);
    await fn(folder);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Replaces the folder's fp32 model by a graph with the given inputs (outputs: logits only). */
async function writeGraphWithInputs(folder: string, inputs: string[]): Promise<void> {
  const g = new OnnxGraph("odd_decoder");
  for (const name of inputs) {
    const type = name.includes("mask") || name.endsWith("_ids")
      ? TensorDataType.INT64
      : TensorDataType.FLOAT;
    g.input(name, type, ["batch_size", "sequence_length"]);
  }
  g.node("Cast", [inputs[0]], { to: TensorDataType.FLOAT }, "logits");
  g.output("logits", TensorDataType.FLOAT, ["batch_size", "sequence_length"]);
  await writeOnnxModel(join(folder, "onnx", "model.onnx"), g);
}

for (
  const [what, inputs, named] of [
    [
      "recurrent state (LFM2-style past_conv)",
      ["input_ids", "attention_mask", "past_conv.0"],
      "past_conv.0",
    ],
    ["inputs_embeds only (multimodal decoder)", ["inputs_embeds", "attention_mask"], "input_ids"],
  ] as const
) {
  Deno.test(`a decoder with ${what} is refused at load, naming the input, and never reports ready`, async () => {
    await withCase("optimum-llama", async (folder) => {
      await writeGraphWithInputs(folder, [...inputs]);
      const options = { kind: "chat" as const, device: "cpu" as const, dtype: "fp32" as const };
      const err = await assertRejects(
        () => createEngine(folder, { ...options, cacheDir: folder }),
        Error,
        named,
      );
      assert(/Svc drives causal LMs exported as .*optimum/.test(err.message), err.message);
      assert(!err.message.includes("\n"), "one line");

      const server = await startEngineServer({
        ...options,
        model: folder,
        id: "odd",
        hostname: "127.0.0.1",
        port: 0,
        cacheDir: folder,
      });
      await assertRejects(() => server.ready, Error, named);
      assertEquals(server.engine.health().state, "error");
      await server.stop();
    });
  });
}

Deno.test("prefill without num_logits_to_keep runs in chunks that bound the logits, with the same output", async () => {
  await withCase("optimum-llama", async (folder) => {
    const model = await loadModel(folder, "chat", { device: "cpu", dtype: "fp32" });
    assert(!model.session.has("num_logits_to_keep"), "the case computes logits for every position");
    // Record the largest logits tensor the session returns.
    let largest = 0;
    const run = model.session.run.bind(model.session);
    model.session.run = async (feeds: Record<string, PlainTensor>) => {
      const out = await run(feeds);
      largest = Math.max(largest, out.logits.data.length);
      return out;
    };
    const vocab = Number(model.config.vocab_size);
    const prompt = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const generate = async (engine: ChatEngine) => {
      const params = { temperature: 0, maxTokens: 6 };
      const texts = await Promise.all(
        [prompt, "short one"].map(async (p) =>
          (await collect(await engine.generate({ prompt: p }, params))).text
        ),
      );
      return texts;
    };
    const whole = await ChatEngine.create(model, { id: "whole" });
    const expected = await generate(whole);
    const wholeLargest = largest;

    largest = 0;
    const budget = 8 * vocab;
    const chunked = await ChatEngine.create(model, {
      id: "chunked",
      scheduler: { maxPrefillLogits: budget },
    });
    assertEquals(await generate(chunked), expected);
    assert(largest <= budget, `largest logits ${largest} > budget ${budget}`);
    assert(wholeLargest > budget, "without a budget the prompt's logits exceed it");
    await chunked.dispose();
  });
});
