// Shared setup of the engine app tests: an app over a fake chat and a fake embedding engine.
import { createEngineApp, type EngineAppOptions } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { MetricsRegistry } from "../../src/http/metrics.ts";
import { FakeEngine, type FakeEngineOptions } from "../_helpers/fake_engine.ts";

export const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
export const USER = [{ role: "user", content: "hello there" }];

export function setup(
  chatOptions: FakeEngineOptions = {},
  appOptions: Partial<EngineAppOptions> = {},
) {
  const chat = new FakeEngine(chatOptions);
  const embed = new FakeEngine({ kind: "embedding", dimensions: 8, contextLength: 16 });
  const metrics = new MetricsRegistry();
  const app = createEngineApp({ engines: [chat, embed], logger: QUIET, metrics, ...appOptions });
  return { app, chat, embed, metrics };
}

// deno-lint-ignore no-explicit-any
export type Json = any;
