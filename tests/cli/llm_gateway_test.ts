// `svc llm gateway` as a real process with no --backend: it starts, is not ready until an engine
// is registered through the management API, then serves it; with --backend, what a Svc engine
// lists (random weights, rerankers) is listed as it said.
import { join } from "node:path";
import { assertEquals, assertMatch } from "../_assert.ts";
import { svcCommand } from "../_helpers/svc_command.ts";
import { FakeEngine } from "../gateway/_fake_backend.ts";
import { freePort } from "../_helpers/free_port.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");
const ADMIN = "gateway-test-admin";

Deno.test("svc llm gateway without backends serves the engines registered later", async () => {
  const home = await Deno.makeTempDir({ prefix: "svc-gateway-cli-" });
  const port = freePort();
  const engine = new FakeEngine("e");
  const child = svcCommand(
    ["llm", "gateway", "--port", String(port), "--state", `sqlite:${join(home, "state.db")}`],
    {
      env: { SVC_HOME: home, SVC_ADMIN_API_KEY: ADMIN, SVC_LOG_LEVEL: "error", NO_COLOR: "1" },
      stdout: "null",
      stderr: "null",
    },
  ).spawn();
  const base = `http://127.0.0.1:${port}`;
  const status = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${base}${path}`, init);
    await res.body?.cancel();
    return res.status;
  };
  const until = async (path: string, want: number) => {
    const deadline = Date.now() + 30_000;
    while (true) {
      const got = await status(path).catch(() => 0);
      if (got === want) return;
      if (Date.now() > deadline) throw new Error(`${path} never answered ${want} (last ${got})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    await until("/health", 200);
    assertEquals(await status("/health/ready"), 503);
    const registered = await status("/v1/management/engines/register", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "e", base_url: engine.serve(), kind: "llm", models: ["m"] }),
    });
    assertEquals(registered, 201);
    await until("/health/ready", 200);
    const chat = await status("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    assertEquals(chat, 200);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await engine.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("svc llm gateway --backend <a Svc demo engine> lists its random_weights and its reranker as rerank", async () => {
  const home = await Deno.makeTempDir({ prefix: "svc-gateway-cli-" });
  const port = freePort();
  const engine = await demoEngineServer("demo/embed", undefined, { withReranker: true });
  const child = svcCommand(
    [
      "llm",
      "gateway",
      "--port",
      String(port),
      "--backend",
      engine.baseUrl,
      "--state",
      `sqlite:${join(home, "state.db")}`,
    ],
    {
      env: { SVC_HOME: home, SVC_ADMIN_API_KEY: ADMIN, SVC_LOG_LEVEL: "error", NO_COLOR: "1" },
      stdout: "null",
      stderr: "null",
    },
  ).spawn();
  try {
    const deadline = Date.now() + 30_000;
    let listed: Record<string, unknown>[] = [];
    while (true) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/models`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      }).catch(() => null);
      listed = res?.ok ? (await res.json()).data : [];
      if (res && !res.ok) await res.body?.cancel();
      if (listed.length === 2 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(
      listed.map((m) => [m.id, m.kind, m.random_weights]).sort(),
      [["demo/embed", "embedding", true], ["demo/rerank", "rerank", true]],
    );
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await engine.stop();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("svc llm gateway --coord <a Redis that is not there> exits 78 naming it, at once", async () => {
  const home = await Deno.makeTempDir({ prefix: "svc-gateway-cli-" });
  const redisPort = freePort();
  const child = svcCommand(
    [
      "llm",
      "gateway",
      "--port",
      String(freePort()),
      "--state",
      `sqlite:${join(home, "state.db")}`,
      "--coord",
      `redis://127.0.0.1:${redisPort}`,
    ],
    {
      env: { SVC_HOME: home, SVC_LOG_LEVEL: "error", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    },
  ).spawn();
  // It used to retry for ever without a word: a hang ends the test as a failure, not as a wait.
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 78, stderr);
    assertMatch(
      stderr,
      new RegExp(`cannot reach the coordination Redis at 127\\.0\\.0\\.1:${redisPort}`),
    );
    assertMatch(stderr, /--coord/);
  } finally {
    clearTimeout(guard);
    await Deno.remove(home, { recursive: true });
  }
});
