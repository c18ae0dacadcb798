// `svc llm status` against a real gateway (in this process, on a loopback port) whose state file
// names this test process as the serve process: deleted engines are not listed, and the table's
// columns line up whatever the cells' widths.
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { llmStatus } from "../../src/cli/llm_status.ts";
import { processStartTime, updateServeState } from "../../src/cli/serve_state.ts";
import { EngineStore } from "../../src/gateway/engines/engine_store.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { CHILD_HOME } from "../gateway/_child_home.ts";
import { runCli } from "./_run_cli.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void lines.push(args.join(" "));
  try {
    return { code: await fn(), out: lines.join("\n") };
  } finally {
    console.log = original;
  }
}

Deno.test("svc llm status leaves out a deleted engine and aligns its columns by the widest cell", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    health: { intervalMs: 60_000 },
    management: { home: CHILD_HOME, store: new EngineStore(join(dir, "engines.json")) },
  });
  const register = async (id: string, models: string[], port: number) => {
    const res = await fetch(`${gw.url}/v1/management/engines/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id, base_url: `http://127.0.0.1:${port}/v1`, kind: "chat", models }),
    });
    assertEquals(res.status, 201, await res.text());
  };
  try {
    await register("a", ["short"], 9);
    await register("a-much-longer-engine-id", ["org/a-rather-long-model-name-indeed"], 10);
    await register("doomed", ["m"], 11);
    const deleted = await fetch(`${gw.url}/v1/management/engines/doomed`, { method: "DELETE" });
    assertEquals((await deleted.json()).state, "stopped");
    const stateFile = join(dir, "serve.env");
    await updateServeState(stateFile, {
      pid: Deno.pid,
      pidStart: processStartTime(Deno.pid) ?? null,
      gatewayUrl: gw.baseUrl,
    });

    const { code, out } = await captured(() => llmStatus(["--state-file", stateFile]));
    assertEquals(code, 0, out);
    assert(!out.includes("doomed"), out);
    const rows = out.split("\n").filter((l) => /^ {2}(ENGINE|a)\b/.test(l));
    assertEquals(rows.length, 3, out);
    // Every column starts at the same place in the header and in each row.
    for (const column of ["KIND", "MODELS", "URL", "STATE"]) {
      const at = rows[0].indexOf(column);
      const starts = rows.slice(1).map((r) => r.slice(at - 2, at));
      assertEquals(starts, ["  ", "  "], `${column} in:\n${out}`);
      for (const r of rows.slice(1)) assert(r[at] !== " ", `${column} in:\n${out}`);
    }
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("svc llm status asks the management API with SVC_ADMIN_API_KEY", async () => {
  const dir = await Deno.makeTempDir();
  const gw = await startGateway({
    logger: QUIET,
    apiKey: "status-chat-key",
    adminApiKey: "status-admin-key",
    health: { intervalMs: 60_000 },
    management: { home: CHILD_HOME, store: new EngineStore(join(dir, "engines.json")) },
  });
  try {
    const res = await fetch(`${gw.url}/v1/management/engines/register`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer status-admin-key" },
      body: JSON.stringify({
        id: "seen",
        base_url: "http://127.0.0.1:9/v1",
        kind: "chat",
        models: ["m"],
      }),
    });
    assertEquals(res.status, 201, await res.text());
    const stateFile = join(dir, "serve.env");
    await updateServeState(stateFile, {
      pid: Deno.pid,
      pidStart: processStartTime(Deno.pid) ?? null,
      gatewayUrl: gw.baseUrl,
    });
    const status = (env: Record<string, string>) =>
      runCli(["llm", "status", "--json", "--state-file", stateFile], {
        perms: ["--allow-read", "--allow-env", "--allow-net=127.0.0.1", "--allow-run"],
        home: dir,
        env,
      });
    for (
      const env of [
        { SVC_ADMIN_API_KEY: "status-admin-key" } as Record<string, string>,
        { SVC_ADMIN_API_KEY: "status-admin-key", SVC_CHAT_API_KEY: "status-chat-key" },
      ]
    ) {
      const { code, stdout, stderr } = await status(env);
      assertEquals(code, 0, stderr);
      const report = JSON.parse(stdout);
      assert(report.cluster !== null, `no cluster status with ${Object.keys(env)}`);
      assertEquals(report.engines.map((e: { id: string }) => e.id), ["seen"]);
    }
    // The chat key alone no longer opens the management API of this gateway.
    const chatOnly = JSON.parse((await status({ SVC_CHAT_API_KEY: "status-chat-key" })).stdout);
    assertEquals(chatOnly.cluster, null);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
