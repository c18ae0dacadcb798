// The management API's 400s name the request's wire fields (snake_case), never the camelCase
// names the gateway uses inside.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { EngineStore } from "../../src/gateway/engines/engine_store.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { CHILD_HOME } from "./_child_home.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

Deno.test("POST /v1/management/engines/register: a bad base_url is a 400 naming base_url", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    health: { intervalMs: 60_000 },
    management: { home: CHILD_HOME, store: new EngineStore(join(dir, "engines.json")) },
  });
  try {
    for (
      const base_url of ["ftp://x/v1", "http://h/v2", "not a url", "http://u:p@h/v1"]
    ) {
      const res = await fetch(`${gw.url}/v1/management/engines/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ base_url, kind: "chat", models: ["m"] }),
      });
      const body = await res.json();
      assertEquals(res.status, 400, JSON.stringify(body));
      assertEquals(body.error.param, "base_url");
      assertMatch(body.error.message, /'base_url'/);
      assert(!/baseUrl|apiKey/.test(body.error.message), body.error.message);
    }
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("POST /v1/management/engines/register: the URL of a configured backend is a 409, as a registered one is", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    health: { intervalMs: 60_000 },
    backends: [{ id: "backend-1", baseUrl: "http://127.0.0.1:9/v1", kind: "llm", models: ["m"] }],
    management: { home: CHILD_HOME, store: new EngineStore(join(dir, "engines.json")) },
  });
  try {
    for (const base_url of ["http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1/"]) {
      const res = await fetch(`${gw.url}/v1/management/engines/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ base_url, kind: "chat", models: ["m"] }),
      });
      const body = await res.json();
      assertEquals(res.status, 409, JSON.stringify(body));
      assertEquals(body.error.param, "base_url");
      assertMatch(body.error.message, /'backend-1'/);
    }
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
