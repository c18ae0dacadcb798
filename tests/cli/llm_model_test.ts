// `svc llm model download | list | show | delete` as subprocesses, downloading from the hub
// stand-in (a generated demo model served as `org/tiny-chat`).
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { startHubStandIn } from "../_helpers/hub_stand_in.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { ModelRegistry } from "../../src/core/model_registry.ts";
import { runCli, withHome } from "./_run_cli.ts";

function perms(home: string, net = true): string[] {
  return [
    "--allow-env",
    `--allow-read=${home}`,
    `--allow-write=${home}`,
    ...(net ? ["--allow-net=127.0.0.1"] : []),
  ];
}

function registryOf(home: string): ModelRegistry {
  return new ModelRegistry(join(home, "models", "registry.json"));
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("svc llm model download fetches from the hub with progress lines and registers the model", async () => {
  await using hub = startHubStandIn({ repos: { "org/tiny-chat": await demoFolder("demo/chat") } });
  await withHome(async (home) => {
    const env = { HUB_ENDPOINT: hub.endpoint, SVC_OFFLINE: "false", HUB_TOKEN: "hf_secret" };
    const result = await runCli(["llm", "model", "download", "org/tiny-chat", "--dtype", "q8"], {
      perms: perms(home),
      home,
      env,
    });
    assertEquals(result.code, 0, result.stderr);
    const sha = await hub.commitOf("org/tiny-chat");
    const folder = join(home, "hub", "models--org--tiny-chat", "snapshots", sha);
    assertMatch(
      result.stdout,
      new RegExp(`path: ${folder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
    assertMatch(result.stdout, /registered as 'org\/tiny-chat' \(source hub\)/);
    assertMatch(result.stdout, /dtype: q8 \(onnx\/model_quantized\.onnx\)/);
    // Not a terminal: plain lines, no carriage returns.
    assert(!result.stderr.includes("\r"), "no in-place redraw when stderr is not a TTY");
    assertMatch(result.stderr, /org\/tiny-chat@main: \d+ files, [\d.]+ [KM]iB/);
    assertMatch(result.stderr, /onnx\/model_quantized\.onnx \([\d.]+ KiB\)/);
    assertMatch(result.stderr, /100%/);
    assert(await exists(join(folder, "onnx", "model_quantized.onnx")));
    assert(!(await exists(join(folder, "onnx", "model.onnx"))), "only the asked dtype");
    assert(hub.requests.every((r) => r.authorization === "Bearer hf_secret"), "HUB_TOKEN sent");

    const entry = await registryOf(home).get("org/tiny-chat");
    assertEquals(entry?.source, "hub");
    assertEquals(entry?.path, folder);
    assertEquals(entry?.revision, "main");
    assert(entry!.sizeBytes > 100_000);

    // Again, offline: nothing fetched, the cached copy is registered.
    const before = hub.requests.length;
    const offline = await runCli(
      ["llm", "model", "download", "org/tiny-chat", "--dtype", "q8", "--offline"],
      { perms: perms(home, false), home, env },
    );
    assertEquals(offline.code, 0, offline.stderr);
    assertMatch(offline.stdout, /already in the cache/);
    assertEquals(hub.requests.length, before);

    // No dtype named: the device's best the repository has (fp32 on webgpu for this one).
    const webgpu = await runCli(
      ["llm", "model", "download", "org/tiny-chat", "--device", "webgpu"],
      { perms: perms(home), home, env },
    );
    assertEquals(webgpu.code, 0, webgpu.stderr);
    assertMatch(webgpu.stdout, /dtype: fp32 \(onnx\/model\.onnx\)/);
    const lacking = await runCli(
      ["llm", "model", "download", "org/tiny-chat", "--dtype", "q4f16"],
      { perms: perms(home), home, env },
    );
    assert(lacking.code !== 0);
    assertMatch(lacking.stderr, /no q4f16 weights .*it has fp32, q8/);
    const unknown = await runCli(["llm", "model", "download", "org/tiny-chat", "--dtype", "fp8"], {
      perms: perms(home),
      home,
      env,
    });
    assert(unknown.code !== 0);
    assertMatch(unknown.stderr, /expected one of fp32, fp16, q8, int8, uint8, q4, q4f16, bnb4/);
  });
});

Deno.test("svc llm model download: unknown repo exits 66, missing --allow-net names the flag", async () => {
  await using hub = startHubStandIn({ repos: {} });
  await withHome(async (home) => {
    const env = { HUB_ENDPOINT: hub.endpoint, SVC_OFFLINE: "false" };
    const missing = await runCli(["llm", "model", "download", "org/nope"], {
      perms: perms(home),
      home,
      env,
    });
    assertEquals(missing.code, 66, missing.stderr);
    assertEquals(missing.stderr.trim().split("\n").length, 1);
    const host = new URL(hub.endpoint).host;
    const noNet = await runCli(["llm", "model", "download", "org/nope"], {
      perms: perms(home, false),
      home,
      env,
    });
    assertEquals(noNet.code, 78, noNet.stderr);
    assertMatch(noNet.stderr, new RegExp(`--allow-net=${host}`));
    const noId = await runCli(["llm", "model", "download"], { perms: perms(home), home });
    assertEquals(noId.code, 65);
    assertEquals(await registryOf(home).list(), []);
  });
});

Deno.test("svc llm model download demo/chat generates it and registers it as a demo model", async () => {
  await withHome(async (home) => {
    const result = await runCli(["llm", "model", "download", "demo/chat"], {
      // Generating reads the tokenizer source from node_modules.
      perms: ["--allow-env", "--allow-read", `--allow-write=${home}`],
      home,
    });
    assertEquals(result.code, 0, result.stderr);
    assertMatch(result.stdout, /demo\/chat: generated \(RANDOM weights/);
    assertMatch(result.stderr, /generating demo\/chat/);
    // As a hub download: the dtype `svc llm run` loads, and (generated: all there) the others.
    assertMatch(result.stdout, /dtype: q8 \(onnx\/model_quantized\.onnx\), the cpu default/);
    assertMatch(result.stdout, /dtypes: fp32, q8 /);
    const entry = await registryOf(home).get("demo/chat");
    assertEquals(entry?.source, "demo");
    assertEquals(entry?.path, join(home, "hub", "demo", "chat"));
    assert(await exists(join(home, "hub", "demo", "chat", "tokenizer.json")));
  });
});

Deno.test("svc llm model download demo/chat: a dtype it has is reported, one it lacks is an error", async () => {
  await withHome(async (home) => {
    const download = (...args: string[]) =>
      runCli(["llm", "model", "download", "demo/chat", ...args], {
        perms: ["--allow-env", "--allow-read", `--allow-write=${home}`],
        home,
      });
    const lacking = await download("--dtype", "q4");
    assertEquals(lacking.code, 65, lacking.stderr);
    assertMatch(lacking.stderr, /demo\/chat is generated with fp32, q8 weights only, not q4/);
    assertMatch(lacking.stderr, /demo\/chat-bench has q4/);
    assertEquals(lacking.stdout, "");
    assert(!(await exists(join(home, "hub", "demo", "chat"))), "nothing generated");
    assertEquals(await registryOf(home).list(), []);

    await download();
    const fp32 = await download("--dtype", "fp32");
    assertEquals(fp32.code, 0, fp32.stderr);
    // Generated once: the second run says so instead of "generating" again.
    assertMatch(fp32.stdout, /demo\/chat: already generated/);
    assert(!fp32.stderr.includes("generating"), fp32.stderr);
    assertMatch(fp32.stdout, /dtype: fp32 \(onnx\/model\.onnx\)\n/);
    const webgpu = await download("--device", "webgpu");
    assertMatch(webgpu.stdout, /dtype: fp32 \(onnx\/model\.onnx\), the webgpu default/);

    const revision = await download("--revision", "v2");
    assertEquals(revision.code, 65, revision.stderr);
    assertMatch(revision.stderr, /no revisions \(drop --revision\)/);
  });
});

Deno.test("svc llm model list, show and delete work on the registry; unknown ids exit 66", async () => {
  await withHome(async (home) => {
    const p = perms(home, false);
    const ro = ["--allow-env", `--allow-read=${home}`]; // list and show only read
    const empty = await runCli(["llm", "model", "list"], { perms: ro, home });
    assertEquals(empty.code, 0, empty.stderr);
    assertMatch(empty.stdout, /no models registered/);
    // The demo models are there without registering, marked as such.
    assertMatch(empty.stdout, /Demo models .*RANDOM weights/);
    for (const id of ["demo/chat", "demo/embed", "demo/chat-bench", "demo/embed-bench"]) {
      assertMatch(empty.stdout, new RegExp(`^  ${id}\\s+\\S`, "m"));
    }
    const hubOnly = await runCli(["llm", "model", "list", "--source", "hub"], { perms: ro, home });
    assert(!hubOnly.stdout.includes("demo/chat"), hubOnly.stdout);

    const hubDir = join(home, "hub", "models--org--m", "snapshots", "abc");
    await Deno.mkdir(join(hubDir, "onnx"), { recursive: true });
    await Deno.writeTextFile(join(hubDir, "config.json"), "{}");
    await Deno.writeFile(join(hubDir, "onnx", "model.onnx"), new Uint8Array(3000));
    const own = await Deno.makeTempDir({ prefix: "svc-own-model-" });
    await Deno.writeTextFile(join(own, "config.json"), "{}");
    const registry = registryOf(home);
    await registry.register({
      id: "org/m",
      path: hubDir,
      source: "hub",
      revision: "main",
      sizeBytes: 3002,
    });
    await registry.register({ id: "mine", path: own, source: "local" });
    try {
      const list = await runCli(["llm", "model", "list"], { perms: ro, home });
      assertEquals(list.code, 0, list.stderr);
      const lines = list.stdout.trim().split("\n");
      assertMatch(lines[0], /^ID\s+SOURCE\s+REVISION\s+SIZE\s+LAST USED\s+PATH$/);
      assertMatch(lines[2], /^mine\s+local\s+-\s+-\s+never/);
      assertMatch(lines[3], /^org\/m\s+hub\s+main\s+2\.93 KiB\s+never/);
      const json = await runCli(["llm", "model", "list", "--json", "--source", "hub"], {
        perms: p,
        home,
      });
      assertEquals(JSON.parse(json.stdout).map((m: { id: string }) => m.id), ["org/m"]);

      const show = await runCli(["llm", "model", "show", "org/m"], { perms: ro, home });
      assertEquals(show.code, 0, show.stderr);
      assertMatch(show.stdout, /source:\s+hub/);
      assertMatch(show.stdout, /2 files/);
      assertMatch(show.stdout, /onnx\/model\.onnx\s+2\.93 KiB/);

      const unknown = await runCli(["llm", "model", "show", "nope"], { perms: ro, home });
      assertEquals(unknown.code, 66);
      assertMatch(unknown.stderr, /'nope' is not registered/);
      const unknownDelete = await runCli(["llm", "model", "delete", "nope", "--yes"], {
        perms: p,
        home,
      });
      assertEquals(unknownDelete.code, 66);

      // stdin is not a terminal: no deletion without --yes.
      const unconfirmed = await runCli(["llm", "model", "delete", "org/m"], { perms: p, home });
      assertEquals(unconfirmed.code, 65);
      assertMatch(unconfirmed.stderr, /--yes/);
      assert(await exists(hubDir));

      const deleted = await runCli(["llm", "model", "delete", "org/m", "--yes"], {
        perms: p,
        home,
      });
      assertEquals(deleted.code, 0, deleted.stderr);
      assert(!(await exists(join(home, "hub", "models--org--m"))), "the repo's cache folder goes");
      assertEquals(await registry.get("org/m"), null);

      // A folder outside SVC_HOME is the user's: only the entry goes.
      const mine = await runCli(["llm", "model", "delete", "mine", "-y"], { perms: p, home });
      assertEquals(mine.code, 0, mine.stderr);
      assertMatch(mine.stdout, /left in place/);
      assert(await exists(join(own, "config.json")));
      assertEquals(await registry.list(), []);
    } finally {
      await Deno.remove(own, { recursive: true });
    }
  });
});
