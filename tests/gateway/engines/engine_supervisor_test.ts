import { assertEquals, assertMatch, assertRejects } from "../../_assert.ts";
import { EngineSupervisor } from "../../../src/gateway/engines/engine_supervisor.ts";
import type { ProcessCommand } from "../../../src/gateway/engines/engine_command.ts";
import {
  ENGINE_INSTANCE_ENV,
  ENGINE_INSTANCE_HEADER,
} from "../../../src/server/engine_instance.ts";
import { setupLogger } from "../../../src/core/logging.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { freePort } from "../../_helpers/free_port.ts";

// A stand-in engine: serves /health and /v1/models on the port it is given, echoing its
// supervisor's token only when `echo` is set.
function standIn(port: number, echo: boolean): ProcessCommand {
  const code = `
    const token = Deno.env.get("${ENGINE_INSTANCE_ENV}") ?? "";
    Deno.serve({ hostname: "127.0.0.1", port: ${port}, onListen() {} }, (req) =>
      new URL(req.url).pathname === "/v1/models"
        ? Response.json({ data: [{ id: "stand-in" }] })
        : Response.json({ status: "ok" }, { headers: ${echo} ? { "${ENGINE_INSTANCE_HEADER}": token } : {} }));
  `;
  return { command: Deno.execPath(), args: ["eval", "--no-config", code], env: {} };
}

const SPEC = { kind: "chat" as const, hostname: "127.0.0.1", home: "/tmp/svc-supervisor-test" };
const OPTIONS = { readyTimeoutMs: 20_000, pollIntervalMs: 50, maxRestartFailures: 0 };

Deno.test("EngineSupervisor takes its engine as ready when /health echoes the child's token", async () => {
  setupLogger({ level: "error", stderr: false });
  const port = freePort();
  const sup = new EngineSupervisor({ ...SPEC, port }, {
    ...OPTIONS,
    command: () => standIn(port, true),
  });
  try {
    await sup.start();
    assertEquals(sup.state, "ready");
    assertEquals(sup.models, ["stand-in"]);
  } finally {
    await sup.stop({ timeoutMs: 2000 });
  }
});

Deno.test("EngineSupervisor never takes another process on the engine's port for its engine", async () => {
  const warnings: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line: string) => warnings.push(line) });
  // Another process holds the port and answers /health 200 (it would receive the prompts).
  const port = freePort();
  const foreign = Deno.serve(
    { hostname: "127.0.0.1", port, onListen() {} },
    () => Response.json({ status: "ok" }),
  );
  // Our child never binds (the port is taken): it just waits.
  const sup = new EngineSupervisor({ ...SPEC, port }, {
    ...OPTIONS,
    readyTimeoutMs: 1500,
    command: () => ({ command: "sleep", args: ["30"], env: {} }),
  });
  try {
    await assertRejects(() => sup.start(), ServiceError, "not ready within 1500 ms");
    assertEquals(sup.state, "error");
    assertMatch(warnings.join("\n"), new RegExp(`another process holds port ${port}`));
  } finally {
    await sup.stop({ timeoutMs: 2000 });
    await foreign.shutdown();
  }
});
