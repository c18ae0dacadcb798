import { assert, assertEquals, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { SecretValue, validateBackendConfig } from "../../src/gateway/backend_config.ts";

const BASE = { id: "a", baseUrl: "http://127.0.0.1:8001/v1", kind: "llm", models: ["demo/chat"] };

Deno.test("validateBackendConfig() fills defaults and detects a local backend", () => {
  const cfg = validateBackendConfig(BASE);
  assertEquals(cfg.weight, 1);
  assertEquals(cfg.maxConcurrency, 8);
  assertEquals(cfg.cost, 0);
  assertEquals(cfg.timeoutMs, 120_000);
  assertEquals(cfg.local, true);
  assertEquals(cfg.apiKey, null);
  const cloud = validateBackendConfig({ ...BASE, baseUrl: "https://api.example.com/v1/" });
  assertEquals(cloud.local, false);
  assertEquals(cloud.baseUrl, "https://api.example.com/v1");
});

Deno.test("validateBackendConfig() names the field at fault", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ ...BASE, id: "" }, "id"],
    [{ ...BASE, baseUrl: "http://127.0.0.1:8001" }, "baseUrl"],
    [{ ...BASE, baseUrl: "ftp://x/v1" }, "baseUrl"],
    [{ ...BASE, baseUrl: "http://user:pw@x/v1" }, "baseUrl"],
    [{ ...BASE, baseUrl: "not a url" }, "baseUrl"],
    [{ ...BASE, kind: "chat" }, "kind"],
    [{ ...BASE, models: [] }, "models"],
    [{ ...BASE, aliases: { gpt: "other" } }, "aliases"],
    [{ ...BASE, apiKey: 5 }, "apiKey"],
    [{ ...BASE, weight: 0 }, "weight"],
    [{ ...BASE, maxConcurrency: 1.5 }, "maxConcurrency"],
    [{ ...BASE, cost: -1 }, "cost"],
    [{ ...BASE, local: "yes" }, "local"],
    [{ ...BASE, timeoutMs: 0 }, "timeoutMs"],
    [{ ...BASE, headers: { Authorization: "Bearer x" } }, "headers"],
    [{ ...BASE, headers: { "bad header": "x" } }, "headers"],
    [{ ...BASE, maxConcurency: 4 }, "maxConcurency"],
  ];
  for (const [input, field] of cases) {
    const err = assertThrows(() => validateBackendConfig(input), ValidationError);
    assertEquals(err.param, field, `for ${JSON.stringify(input)}: ${err.message}`);
  }
});

Deno.test("validateBackendConfig() keeps the key out of JSON and inspection", () => {
  const cfg = validateBackendConfig({
    ...BASE,
    apiKey: "sk-secret-123456",
    aliases: { g: "demo/chat" },
  });
  assertEquals(cfg.apiKey?.reveal(), "sk-secret-123456");
  assert(!JSON.stringify(cfg).includes("sk-secret-123456"));
  assert(!Deno.inspect(cfg).includes("sk-secret-123456"));
  assert(!String(cfg.apiKey).includes("sk-secret"));
  assert(cfg.apiKey instanceof SecretValue);
});
