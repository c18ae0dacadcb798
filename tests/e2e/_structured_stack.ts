// A demo chat engine server and a gateway in front of it, for the tool-calling and
// structured-output end-to-end tests: each test runs against both base URLs.
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { startEngineServer } from "../../src/server/engine_server.ts";
import { TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

/** The two ways to reach the engine, by name. */
export interface StructuredStack {
  targets: { name: "engine" | "gateway"; baseUrl: string }[];
  /** The id both serve the model under. */
  model: string;
  stop(): Promise<void>;
}

/** Starts `demo/chat`, or the chat model in `folder`, and a gateway routing to it. */
export async function structuredStack(folder?: string): Promise<StructuredStack> {
  const engine = folder === undefined
    ? await demoEngineServer("demo/chat")
    : await startEngineServer(
      {
        model: folder,
        kind: "chat",
        hostname: "127.0.0.1",
        port: 0,
        device: "cpu",
        cacheDir: TEST_MODEL_CACHE,
      },
    );
  const model = (await engine.ready).info.id;
  const gateway = await startGateway({
    logger: QUIET,
    backends: [{ id: "demo", baseUrl: engine.baseUrl, kind: "llm", models: [model] }],
  });
  return {
    model,
    targets: [
      { name: "engine", baseUrl: engine.baseUrl },
      { name: "gateway", baseUrl: gateway.baseUrl },
    ],
    stop: async () => {
      await gateway.stop();
      await engine.stop();
    },
  };
}

/** Arguments of the demo tools: bounded strings, so the random-weight model finishes them. */
export const WEATHER_PARAMETERS = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1, maxLength: 12 },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
  },
  required: ["city", "unit"],
  additionalProperties: false,
} as const;

/** A second tool, so the model has a choice. */
export const TIME_PARAMETERS = {
  type: "object",
  properties: { zone: { type: "string", maxLength: 8 } },
  required: ["zone"],
  additionalProperties: false,
} as const;

/** A structured answer with bounded fields. */
export const PERSON_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 16 },
    age: { type: "integer", minimum: 0, maximum: 120 },
    hobbies: { type: "array", items: { type: "string", maxLength: 10 }, maxItems: 3 },
    nickname: { anyOf: [{ type: "string", maxLength: 8 }, { type: "null" }] },
  },
  required: ["name", "age", "hobbies", "nickname"],
  additionalProperties: false,
} as const;
