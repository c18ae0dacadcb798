// Runs the tiny demo models on the device named by the first argument and prints the results as
// JSON. A separate process per device, because one process holds either the native or the web
// ONNX Runtime (see src/engine/runtime.ts).
import { collect } from "../../src/engine/chat/chat_engine.ts";
import { setupLogger } from "../../src/core/logging.ts";
import type { Device } from "../../src/core/inference_types.ts";
import { demoChatEngine, demoEmbeddingEngine } from "../_helpers/demo_engines.ts";

setupLogger("error");
const device = Deno.args[0] as Device;
const options = { device, dtype: "fp32" as const, allowFallbackAdapter: true };
const embed = await demoEmbeddingEngine(options);
const { vectors } = await embed.embed(["hello world", "a somewhat longer input sentence"]);
const chat = await demoChatEngine(options);
const reply = await collect(
  await chat.generate({ prompt: "Hello" }, { temperature: 0, maxTokens: 8 }),
);
console.log(JSON.stringify({ vectors: vectors.map((v) => [...v]), text: reply.text }));
await embed.dispose();
await chat.dispose();
