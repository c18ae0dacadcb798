// Engines on the generated demo models (random weights) for tests. The model folders are built
// once per machine into a shared temp folder; building is atomic, so parallel test files can race.
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createEngine, type EngineOptions } from "../../src/engine/create_engine.ts";
import type { ChatEngine } from "../../src/engine/chat/chat_engine.ts";
import type { EmbeddingEngine } from "../../src/engine/embedding/embedding_engine.ts";
import { materializeDemoModel } from "../../src/engine/generated_models/demo_models.ts";

/** Where tests keep generated demo models. */
export const TEST_MODEL_CACHE: string = join(tmpdir(), "svc-test-models");

/** Folder of a demo model, generated on first use. */
export function demoFolder(id: "demo/chat" | "demo/embed" | "demo/rerank"): Promise<string> {
  return materializeDemoModel(id, TEST_MODEL_CACHE);
}

/** A chat engine on `demo/chat` (native CPU unless `device` says otherwise). */
export async function demoChatEngine(options: Partial<EngineOptions> = {}): Promise<ChatEngine> {
  return await createEngine("demo/chat", {
    cacheDir: TEST_MODEL_CACHE,
    device: "cpu",
    ...options,
  }) as ChatEngine;
}

/** An embedding engine on `demo/embed`. */
export async function demoEmbeddingEngine(
  options: Partial<EngineOptions> = {},
): Promise<EmbeddingEngine> {
  return await createEngine("demo/embed", {
    cacheDir: TEST_MODEL_CACHE,
    device: "cpu",
    ...options,
  }) as EmbeddingEngine;
}
