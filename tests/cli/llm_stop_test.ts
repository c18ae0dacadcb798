// `svc llm stop` signals only processes that are provably the ones `svc llm serve` recorded, and
// the state file follows the supervisor's restarts, so stop reaches the engine that runs now.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import {
  checkRecordedPid,
  isProcessAlive,
  processStartTime,
  readServeState,
} from "../../src/cli/serve_state.ts";
import { startServedStack } from "../_helpers/served_stack.ts";
import { runCli, withHome } from "./_run_cli.ts";

const PERMS = ["--allow-read", "--allow-write", "--allow-env", "--allow-run"];

async function waitFor(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("svc llm stop leaves alone processes that only reuse a recorded pid, and says why", async () => {
  await withHome(async (home) => {
    const sleeps = [0, 1, 2].map(() => new Deno.Command("sleep", { args: ["60"] }).spawn());
    const [noStart, wrongStart, real] = sleeps.map((c) => c.pid);
    try {
      const state = join(home, "serve.env");
      await Deno.writeTextFile(
        state,
        [
          `SVC_SERVE_PID=${noStart}`, // an older file, or a forged one: no start time to compare
          `SVC_LLM_PID=${wrongStart}`,
          `SVC_LLM_PID_START=1`,
          `SVC_EMBEDDING_PID=${real}`,
          `SVC_EMBEDDING_PID_START=${processStartTime(real)}`,
        ].join("\n") + "\n",
      );
      const stop = await runCli(["llm", "stop", "--state-file", state], { perms: PERMS, home });
      assertEquals(stop.code, 0, stop.stderr);
      assertMatch(stop.stdout, new RegExp(`pid ${noStart} .*no start time was recorded`));
      assertMatch(stop.stdout, new RegExp(`pid ${wrongStart} .*the pid was reused.*not signalled`));
      assertMatch(stop.stdout, /stopped 1 engine process/);
      assert(isProcessAlive(noStart) && isProcessAlive(wrongStart), "unrelated processes live");
      assertEquals((await sleeps[2].status).signal, "SIGTERM", "the provably recorded one stops");
    } finally {
      for (const c of sleeps) {
        try {
          c.kill("SIGKILL");
        } catch { /* exited */ }
        await c.status;
      }
    }
  });
});

Deno.test("svc llm serve records an engine's new pid after a restart, and svc llm stop stops that one", async () => {
  const stack = await startServedStack();
  try {
    const first = stack.state.llmPid!;
    Deno.kill(first, "SIGKILL");
    let now = first;
    await waitFor("the restarted chat engine in the state file", async () => {
      const s = await readServeState(stack.stateFile);
      now = s?.llmPid ?? first;
      return now !== first && checkRecordedPid(now, s?.llmPidStart).status === "ours";
    });
    const stop = await runCli(["llm", "stop", "--state-file", stack.stateFile], {
      perms: PERMS,
      home: join(stack.stateFile, ".."),
    });
    assertEquals(stop.code, 0, stop.stderr);
    assertMatch(stop.stdout, /svc: stopped \(pid \d+\)/);
    await waitFor("the restarted engine to exit", () => !isProcessAlive(now));
  } finally {
    await stack.stop();
  }
});

Deno.test("svc llm stop and status without --allow-run name the flag, exit 77 and leave the state file and the server alone", async () => {
  await withHome(async (home) => {
    const server = new Deno.Command("sleep", { args: ["60"] }).spawn();
    try {
      const state = join(home, "serve.env");
      const text = `SVC_SERVE_PID=${server.pid}\nSVC_SERVE_PID_START=${
        processStartTime(server.pid)
      }\nSVC_LLM_PID=${server.pid}\n`;
      await Deno.writeTextFile(state, text);
      for (const command of ["stop", "status"]) {
        const r = await runCli(["llm", command, "--state-file", state], {
          perms: ["--allow-read", "--allow-write", "--allow-env"],
          home,
        });
        assertEquals(r.code, 77, `${command}: ${r.stdout}${r.stderr}`);
        assertEquals(r.stderr.trim().split("\n").length, 1, r.stderr);
        assertMatch(r.stderr, /--allow-run/);
        assertEquals(r.stdout, "");
        assertEquals(await Deno.readTextFile(state), text, `${command} left the state file`);
        assert(isProcessAlive(server.pid), `${command} left the server running`);
      }
    } finally {
      server.kill("SIGKILL");
      await server.status;
    }
  });
});
