// `svc llm model delete` refuses a model a running server uses (exit 75, naming the server and
// how to stop it) unless --force: a real `svc llm run` subprocess that recorded its models, and
// the lock and state file of a running `svc llm serve` (held by this test process).
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { ModelRegistry } from "../../src/core/model_registry.ts";
import { claimServeLock, updateServeState } from "../../src/cli/serve_state.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { svcCommand } from "../_helpers/svc_command.ts";
import { runCli, withHome } from "./_run_cli.ts";

// What the delete help names: no --allow-run, no --allow-net.
const perms = (home: string) => [
  "--allow-env",
  `--allow-read=${home}`,
  `--allow-write=${home}`,
];

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

// A generated demo model copied into `dest` (not linked: deleting it must not touch the shared one).
async function copyDemo(id: "demo/embed" | "demo/rerank", dest: string): Promise<void> {
  await Deno.mkdir(join(dest, ".."), { recursive: true });
  const out = await new Deno.Command("cp", { args: ["-r", await demoFolder(id), dest] }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
}

Deno.test("svc llm model delete refuses a model a running svc llm run serves (by id or by folder) unless --force", async () => {
  await withHome(async (home) => {
    const registry = new ModelRegistry(join(home, "models", "registry.json"));
    const embed = join(home, "hub", "demo", "embed");
    const reranker = join(home, "hub", "models--org--r", "snapshots", "abc");
    const other = join(home, "hub", "models--org--other", "snapshots", "abc");
    await copyDemo("demo/embed", embed);
    await copyDemo("demo/rerank", reranker);
    await copyDemo("demo/rerank", other);
    await registry.register({ id: "demo/embed", path: embed, source: "demo" });
    await registry.register({ id: "org/r", path: reranker, source: "hub", revision: "main" });
    await registry.register({ id: "org/other", path: other, source: "hub", revision: "main" });

    // The reranker is served by its folder: the record resolves it, so org/r counts as in use.
    const child = svcCommand([
      ...["llm", "run", "--model", "demo/embed", "--rerank-model", reranker],
      ...["--port", "0", "--device", "cpu", "--offline"],
    ], {
      env: { SVC_HOME: home, SVC_LOG_LEVEL: "warn", NO_COLOR: "1" },
      perms: [
        "--allow-read",
        `--allow-write=${home}`,
        "--allow-env",
        "--allow-ffi",
        "--allow-sys",
        "--allow-net=127.0.0.1",
      ],
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    try {
      while ((out.match(/svc: serving .*\n/g) ?? []).length < 2) {
        const next = await reader.read();
        if (next.done) throw new Error(`svc llm run ended early: ${out}\n${await stderr}`);
        out += next.value;
      }
      const url = out.match(/at (http:\S+\/v1)/)![1];
      const del = (...args: string[]) =>
        runCli(["llm", "model", "delete", ...args], { perms: perms(home), home });

      for (const id of ["demo/embed", "org/r"]) {
        const refused = await del(id, "--yes");
        assertEquals(refused.code, 75, refused.stderr);
        assertMatch(
          refused.stderr,
          new RegExp(
            `not deleting '${id}': it is in use by svc llm run \\(pid ${child.pid}, ${url}\\)`,
          ),
        );
        assertMatch(refused.stderr, new RegExp(`kill ${child.pid}\\) first, or pass --force`));
      }
      assert(await exists(embed) && await exists(reranker), "nothing was deleted");
      assert((await registry.get("demo/embed")) !== null);

      // A model nobody serves goes as before.
      assertEquals((await del("org/other", "--yes")).code, 0);
      assert(!(await exists(join(home, "hub", "models--org--other"))));

      const forced = await del("org/r", "--yes", "--force");
      assertEquals(forced.code, 0, forced.stderr);
      assertMatch(forced.stderr, /warning: --force: deleting 'org\/r' while svc llm run \(pid/);
      assert(!(await exists(join(home, "hub", "models--org--r"))));
      assertEquals(await registry.get("org/r"), null);
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await reader.cancel();
      await stderr;
    }
    // Stopped, it leaves no record: the model can go.
    const runs = await Array.fromAsync(Deno.readDir(join(home, "engines", "runs")));
    assertEquals(runs.map((e) => e.name), []);
    const after = await runCli(["llm", "model", "delete", "demo/embed", "--yes"], {
      perms: perms(home),
      home,
    });
    assertEquals(after.code, 0, after.stderr);
  });
});

Deno.test("svc llm model delete refuses a model a running svc llm serve names; a dead run's record does not count", async () => {
  await withHome(async (home) => {
    const registry = new ModelRegistry(join(home, "models", "registry.json"));
    const folder = join(home, "hub", "models--org--m", "snapshots", "abc");
    await Deno.mkdir(folder, { recursive: true });
    await Deno.writeTextFile(join(folder, "config.json"), "{}");
    await registry.register({ id: "org/m", path: folder, source: "hub", revision: "main" });
    // A record no process holds locked: what a `svc llm run` killed with SIGKILL leaves.
    const runs = join(home, "engines", "runs");
    await Deno.mkdir(runs, { recursive: true });
    await Deno.writeTextFile(
      join(runs, "999999-dead.json"),
      JSON.stringify({
        pid: 999999,
        parentPid: 1,
        supervised: false,
        url: "http://127.0.0.1:9/v1",
        models: [{ name: "org/m" }],
        startedAt: new Date().toISOString(),
      }),
    );

    // This process plays the running serve: it holds the serve lock and wrote the state file.
    const statePath = join(home, "engines", "serve.env");
    const lock = await claimServeLock(statePath);
    try {
      await updateServeState(statePath, {
        pid: Deno.pid,
        gatewayUrl: "http://127.0.0.1:8000/v1",
        chatModel: "org/m",
      });
      const refused = await runCli(["llm", "model", "delete", "org/m", "--yes"], {
        perms: perms(home),
        home,
      });
      assertEquals(refused.code, 75, refused.stderr);
      assertMatch(
        refused.stderr,
        new RegExp(
          `it is in use by svc llm serve \\(pid ${Deno.pid}, gateway http://127.0.0.1:8000/v1\\); ` +
            `stop it with 'svc llm stop' first, or pass --force`,
        ),
      );
      assert(!refused.stderr.includes("999999"), "the dead run is not named");
      assert(await exists(folder));
    } finally {
      lock.close();
    }
    // The serve has exited (its lock is gone); the state file still names the model.
    const deleted = await runCli(["llm", "model", "delete", "org/m", "--yes"], {
      perms: perms(home),
      home,
    });
    assertEquals(deleted.code, 0, deleted.stderr);
    assert(!(await exists(join(home, "hub", "models--org--m"))));
    assertEquals(await Array.fromAsync(Deno.readDir(runs)), [], "the dead record was removed");
  });
});
