import { assert, assertEquals, assertMatch } from "../../_assert.ts";
import { EngineSupervisor } from "../../../src/gateway/engines/engine_supervisor.ts";
import type { ProcessCommand } from "../../../src/gateway/engines/engine_command.ts";
import {
  ENGINE_INSTANCE_ENV,
  ENGINE_INSTANCE_HEADER,
} from "../../../src/server/engine_instance.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { freePort } from "../../_helpers/free_port.ts";

// A stand-in engine that answers /health (echoing its supervisor's token) until the file `wedge`
// appears: it then takes the file away (so the next process is healthy) and leaves every later
// /health unanswered while it stays alive, as an engine whose connections are all held would.
// With `loading`, /health answers 503 forever (a model still loading). Each probe prints a line.
function standIn(port: number, wedge: string, loading = false): ProcessCommand {
  const code = `
    const token = Deno.env.get("${ENGINE_INSTANCE_ENV}") ?? "";
    let wedged = false;
    Deno.serve({ hostname: "127.0.0.1", port: ${port}, onListen() {} }, (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/v1/models") return Response.json({ data: [{ id: "stand-in" }] });
      console.log("health " + Deno.pid);
      if (${loading}) return Response.json({ status: "loading" }, { status: 503 });
      try {
        Deno.removeSync(${JSON.stringify(wedge)});
        wedged = true;
      } catch { /* not asked to wedge */ }
      if (wedged) return new Promise(() => {});
      return Response.json({ status: "ok" }, { headers: { "${ENGINE_INSTANCE_HEADER}": token } });
    });
  `;
  return {
    command: Deno.execPath(),
    args: ["eval", "--no-config", code],
    env: {},
  };
}

async function until(what: string, ok: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const SPEC = { kind: "chat" as const, hostname: "127.0.0.1", home: "/tmp/svc-supervisor-test" };
const OPTIONS = {
  readyTimeoutMs: 20_000,
  pollIntervalMs: 50,
  restartDelayMs: 20,
  healthIntervalMs: 100,
  unhealthyRestartMs: 1000,
  stopTimeoutMs: 2000,
};

Deno.test("EngineSupervisor restarts a ready engine whose /health stays unanswered past the limit", async () => {
  const warnings: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line: string) => warnings.push(line) });
  const port = freePort();
  const dir = await Deno.makeTempDir();
  const wedge = `${dir}/wedge`;
  const sup = new EngineSupervisor({ ...SPEC, model: "stand-in", port }, {
    ...OPTIONS,
    command: () => standIn(port, wedge),
  });
  try {
    await sup.start();
    const first = sup.pid!;
    await Deno.writeTextFile(wedge, "");
    await until("a new engine process", () => sup.state === "ready" && sup.pid !== first);
    assertEquals(sup.restarts, 1);
    let gone = false;
    try {
      Deno.kill(first, "SIGCONT");
    } catch {
      gone = true;
    }
    assert(gone, "the wedged process was killed");
    const warning = warnings.find((l) => l.includes("unhealthy for"));
    assert(warning !== undefined, warnings.join("\n"));
    assertMatch(warning, new RegExp(`chat engine for stand-in \\(pid ${first}, port ${port}\\)`));
    assertMatch(warning, /unhealthy for \d+\.\d s \(last probe: no answer within 2000 ms\)/);
  } finally {
    await sup.stop({ timeoutMs: 2000 });
    await Deno.remove(dir, { recursive: true });
    setupLogger({ level: "error", stderr: false });
  }
});

Deno.test("EngineSupervisor does not restart an engine that is still loading", async () => {
  const warnings: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line: string) => warnings.push(line) });
  const port = freePort();
  const probes: number[] = [];
  const sup = new EngineSupervisor({ ...SPEC, port }, {
    ...OPTIONS,
    command: () => standIn(port, "/nonexistent/wedge", true),
    onOutput: (line) => {
      if (line.startsWith("health ")) probes.push(Date.now());
    },
  });
  try {
    sup.start().catch(() => {});
    await until("the first probe", () => probes.length > 0);
    const pid = sup.pid;
    // Probes answered 503 for well past the limit: the loading engine is left alone.
    await until("probes spanning twice the limit", () => probes.at(-1)! - probes[0] > 2000);
    assertEquals(sup.state, "starting");
    assertEquals(sup.pid, pid);
    assertEquals(sup.restarts, 0);
    assertEquals(warnings.filter((l) => l.includes("unhealthy")), []);
  } finally {
    await sup.stop({ timeoutMs: 2000 });
    setupLogger({ level: "error", stderr: false });
  }
});
