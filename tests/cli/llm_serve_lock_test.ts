// `svc llm serve` takes a lock on its state file before it starts anything: a second serve of the
// same file is refused even while the first still loads, `svc llm status` / `svc llm stop` find
// the loading serve, and neither a crashed serve's lock nor an unreadable record blocks the next.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { isProcessAlive, processStartTime, readServeState } from "../../src/cli/serve_state.ts";
import { CHILD_HOME } from "../gateway/_child_home.ts";
import { svcCommand } from "../_helpers/svc_command.ts";
import { runCli } from "./_run_cli.ts";

const PERMS = ["--allow-read", "--allow-write", "--allow-env", "--allow-run", "--allow-net"];

function serve(state: string): Deno.ChildProcess {
  return svcCommand([
    ...["llm", "serve", "--model", "demo/chat", "--port", "0", "--llm-port", "0"],
    ...["--device", "cpu", "--offline", "--state-file", state],
  ], {
    env: { SVC_HOME: CHILD_HOME, SVC_CHAT_API_KEY: "", NO_COLOR: "1", SVC_LOG_LEVEL: "error" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function output(child: Deno.ChildProcess) {
  const [status, stdout, stderr] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  return { code: status.code, stdout, stderr };
}

async function waitFor(what: string, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Waits until `child` has recorded its pid (at start-up), then stops it with `svc llm stop`.
async function recordedThenStopped(
  child: Deno.ChildProcess,
  done: ReturnType<typeof output>,
  state: string,
  dir: string,
) {
  await waitFor(
    "the serve's pid in the state file",
    async () => (await readServeState(state).catch(() => null))?.pid === child.pid,
  );
  const status = await runCli(["llm", "status", "--state-file", state], {
    perms: PERMS,
    home: dir,
  });
  assertEquals(status.code, 0, status.stdout + status.stderr);
  assertMatch(status.stdout, new RegExp(`^svc: (starting|running) \\(pid ${child.pid}\\)`));
  const stop = await runCli(["llm", "stop", "--state-file", state], { perms: PERMS, home: dir });
  assertEquals(stop.code, 0, stop.stdout + stop.stderr);
  assertMatch(stop.stdout, new RegExp(`svc: stopped \\(pid ${child.pid}\\)`));
  return await done;
}

Deno.test("two svc llm serve started at once with one state file: the second is refused, status and stop reach the first while it loads", async () => {
  const dir = await Deno.makeTempDir();
  const state = join(dir, "serve.env");
  const children = [serve(state), serve(state)];
  const outputs = children.map(output);
  try {
    // Whichever lost the lock exits at once; the other loads (seconds) and serves.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("both serves are still running")), 90_000);
    });
    const first = await Promise.race([
      ...outputs.map((o, i) => o.then((r) => ({ ...r, i }))),
      bound,
    ]).finally(() => clearTimeout(timer));
    assertEquals(first.code, 75, first.stdout + first.stderr);
    assertEquals(first.stderr.trim().split("\n").length, 1, first.stderr);
    assertMatch(
      first.stderr,
      /^svc: svc llm serve is already running \(.*state file .*serve\.env\); stop it with 'svc llm stop'/,
    );
    const winner = children[1 - first.i];
    const recordedStart = processStartTime(winner.pid);
    const stopped = await recordedThenStopped(winner, outputs[1 - first.i], state, dir);
    assert(stopped.code === 0 || stopped.code === 130, stopped.stderr);
    const after = await readServeState(state);
    assertEquals(after?.pid, undefined, "the record no longer names a serve");
    assert(!isProcessAlive(winner.pid) || processStartTime(winner.pid) !== recordedStart);
    for (const pid of [after?.llmPid]) assert(pid === undefined || !isProcessAlive(pid));
  } finally {
    for (const c of children) {
      try {
        c.kill("SIGKILL");
      } catch { /* exited */ }
    }
    await Promise.all(outputs);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an unreadable state file: status and stop name it and say to remove it; serve replaces it (no serve holds the lock)", async () => {
  const dir = await Deno.makeTempDir();
  const state = join(dir, "serve.env");
  try {
    for (const text of ["garbage\n", "SVC_SERVE_PID=12\u0001\n"]) {
      await Deno.writeTextFile(state, text);
      for (const command of ["status", "stop"]) {
        const r = await runCli(["llm", command, "--state-file", state], {
          perms: PERMS,
          home: dir,
        });
        assertEquals(r.code, 78, r.stdout + r.stderr);
        assertEquals(r.stderr.trim().split("\n").length, 1, r.stderr);
        assertMatch(
          r.stderr,
          /^svc: the state file .*serve\.env is unreadable \(.*\); remove it if no 'svc llm serve' is running/,
        );
        assertEquals(await Deno.readTextFile(state), text, "left as it was");
      }
    }
    // A pid that runs but is not the recorded process: status says so, not "has exited".
    await Deno.writeTextFile(state, "SVC_SERVE_PID=1\nSVC_SERVE_PID_START=1\n");
    const foreign = await runCli(["llm", "status", "--state-file", state], {
      perms: PERMS,
      home: dir,
    });
    assertEquals(foreign.code, 3);
    assertMatch(foreign.stdout, /pid 1 recorded in .* is not the svc llm serve process any more/);
    // A lock file left by a serve that died (nobody holds its OS lock) blocks nothing either.
    await Deno.writeTextFile(`${state}.lock`, "");
    await Deno.writeTextFile(state, "garbage\n");
    const child = serve(state);
    const stopped = await recordedThenStopped(child, output(child), state, dir);
    assertMatch(
      stopped.stderr,
      /warning: the state file .*serve\.env is unreadable .*; it is replaced/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
