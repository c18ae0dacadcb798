// `svc llm run` as a real subprocess: a model given as a path that does not exist, and the
// default model falling back to the demo model offline.
import { assertEquals, assertMatch } from "../_assert.ts";
import { linkSharedHub } from "../gateway/_child_home.ts";
import { runCli, withHome } from "./_run_cli.ts";
import { probeGpu } from "../_helpers/gpu_adapter.ts";

const PERMS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-sys",
  "--allow-net=127.0.0.1",
];

Deno.test("svc llm run --model ./no-such-folder says the folder was not found (exit 66)", async () => {
  await withHome(async (home) => {
    const result = await runCli(["llm", "run", "--model", "./no-such-folder", "--port", "0"], {
      perms: PERMS,
      home,
    });
    assertEquals(result.code, 66, result.stderr);
    assertMatch(result.stderr, /^svc: model folder '\.\/no-such-folder' was not found;/m);
  });
});

Deno.test("svc llm run --model demo/chatt suggests demo/chat instead of asking the hub", async () => {
  await withHome(async (home) => {
    const result = await runCli(["llm", "run", "--model", "demo/chatt", "--port", "0"], {
      perms: PERMS,
      home,
      env: { SVC_OFFLINE: "false", HUB_ENDPOINT: "http://127.0.0.1:9/" },
    });
    assertEquals(result.code, 66, result.stderr);
    assertEquals(result.stderr.trim().split("\n").length, 1, result.stderr);
    assertMatch(
      result.stderr,
      /^svc: 'demo\/chatt' is not a demo model; did you mean 'demo\/chat'\? The demo models are demo\/chat, /m,
    );
  });
});

Deno.test("svc llm run without --allow-ffi says in one line to add it", async () => {
  await withHome(async (home) => {
    await linkSharedHub(home);
    const result = await runCli(["llm", "run", "--model", "demo/embed", "--port", "0"], {
      perms: PERMS.filter((p) => p !== "--allow-ffi"),
      home,
    });
    assertEquals(result.code, 78, result.stderr);
    assertEquals(result.stderr.trim().split("\n").length, 1, result.stderr);
    assertMatch(
      result.stderr,
      /^svc: could not load the embedding model: .*--allow-ffi \(or -A\)$/m,
    );
  });
});

Deno.test("svc llm run --device webgpu without a hardware adapter promises no demo fallback it cannot do", async () => {
  const gpu = await probeGpu();
  if (gpu.info !== null && !gpu.info.isFallback) return; // a real GPU: webgpu runs
  await withHome(async (home) => {
    // No model named: the default one would fall back to the demo model, but the device is the
    // problem, and the demo model needs it as much.
    const result = await runCli(["llm", "run", "--device", "webgpu", "--port", "0"], {
      perms: PERMS,
      home,
      env: { SVC_LOG_LEVEL: "warn" },
    });
    assertEquals(result.code, 78, result.stderr);
    assertMatch(result.stderr, /^svc: device 'webgpu' was requested but this machine has /m);
    assertEquals(/Serving demo|instead/.test(result.stderr), false, result.stderr);
  });
});

Deno.test("svc llm run with no model, offline, serves demo/chat and says --model picks a real one; --cors-origins limits which pages may read it", async () => {
  await withHome(async (home) => {
    // The demo models of other tests, so nothing is generated here.
    await linkSharedHub(home);
    const allowed: (string | null)[] = [];
    const result = await runCli(
      ["llm", "run", "--port", "0", "--device", "cpu", "--cors-origins", "http://app.example"],
      {
        perms: PERMS,
        home,
        onStart: (child, output) => {
          const poll = setInterval(async () => {
            const base = /name a real one/.test(output.stdout()) &&
              output.stdout().match(/ at (http:\/\/\S+\/v1) /)?.[1];
            if (!base) return;
            clearInterval(poll);
            for (const origin of ["http://app.example", "http://evil.example"]) {
              const res = await fetch(`${base}/models`, { headers: { origin } });
              await res.body?.cancel();
              allowed.push(res.headers.get("access-control-allow-origin"));
            }
            child.kill("SIGTERM");
          }, 100);
          child.status.then(() => clearInterval(poll));
        },
      },
    );
    assertEquals(result.code, 0, result.stderr);
    assertMatch(result.stdout, /svc: serving demo\/chat \(chat, q8, RANDOM weights\)/);
    assertMatch(
      result.stdout,
      /svc: the default model could not be loaded: name a real one with --model/,
    );
    assertEquals(allowed, ["http://app.example", null]);
  });
});

Deno.test("svc llm run --prefix-cache-mib sets the chat engine's prefix cache budget; a bad value names the flag", async () => {
  await withHome(async (home) => {
    await linkSharedHub(home);
    const bad = await runCli(["llm", "run", "--model", "demo/chat", "--prefix-cache-mib", "lots"], {
      perms: PERMS,
      home,
    });
    assertEquals(bad.code, 65, bad.stderr); // EX_DATAERR, as every bad flag value
    assertMatch(bad.stderr, /--prefix-cache-mib is 'lots': expected a whole number/);
    let budget: string | undefined;
    const result = await runCli(
      ["llm", "run", "--model", "demo/chat", "--port", "0", "--prefix-cache-mib", "3"],
      {
        perms: PERMS,
        home,
        onStart: (child, output) => {
          const poll = setInterval(async () => {
            const base = output.stdout().match(/ at (http:\/\/\S+)\/v1 /)?.[1];
            if (!base) return;
            clearInterval(poll);
            const metrics = await (await fetch(`${base}/metrics`)).text();
            budget = metrics.match(/^svc_prefix_cache_budget_bytes\{[^}]*\} (\d+)$/m)?.[1];
            child.kill("SIGTERM");
          }, 100);
          child.status.then(() => clearInterval(poll));
        },
      },
    );
    assertEquals(result.code, 0, result.stderr);
    assertEquals(budget, String(3 * 1024 * 1024));
  });
});
