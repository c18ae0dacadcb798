// `svc ports` as a subprocess. The fixed Svc ports may be in use by anyone on a shared machine,
// so the checks that need a known state use SVC_LLM_PORT pointed at a port this test holds.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { portTable, servePorts } from "../../src/cli/ports.ts";
import { updateServeState } from "../../src/cli/serve_state.ts";
import { runCli, withHome } from "./_run_cli.ts";

function perms(home: string): string[] {
  return ["--allow-env", `--allow-read=${home}`, "--allow-net=0.0.0.0,127.0.0.1"];
}

Deno.test("svc ports lists every SvcPorts port and names what svc llm serve runs there", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  await withHome(async (home) => {
    // What a running `svc llm serve` records (this test process stands in for it).
    await Deno.mkdir(join(home, "engines"), { recursive: true });
    await updateServeState(join(home, "engines", "serve.env"), {
      pid: Deno.pid,
      llmPort: port,
      chatModel: "demo/chat",
      llmPid: 4242,
    });
    const result = await runCli(["ports"], {
      perms: perms(home),
      home,
      env: { SVC_LLM_PORT: String(port) },
    });
    assertEquals(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split("\n");
    assertMatch(lines[0], /^PORT\s+NAME\s+STATE\s+USED BY$/);
    for (
      const name of [
        "GATEWAY_DEFAULT",
        "LLM_DEFAULT",
        "LLM_WSL_FALLBACK, BENCHMARK_LLM",
        "STUDIO_BACKEND",
        "STUDIO_FRONTEND",
        "EMBEDDING_DEFAULT",
      ]
    ) {
      assert(lines.some((l) => l.includes(name) && /\b(free|in use)\b/.test(l)), name);
    }
    const ours = lines.find((l) => l.includes("SVC_LLM_PORT"));
    assertMatch(
      ours ?? "",
      new RegExp(
        `^\\s*${port}\\s+SVC_LLM_PORT\\s+in use\\s+svc llm serve: chat engine demo/chat \\(pid 4242\\)$`,
      ),
    );

    const json = await runCli(["ports", "--json"], {
      perms: perms(home),
      home,
      env: { SVC_LLM_PORT: String(port) },
    });
    const entries = JSON.parse(json.stdout) as { port: number; free: boolean; names: string[] }[];
    assertEquals(entries.map((e) => e.port).slice(0, 6), [8000, 8001, 8901, 8080, 5173, 8090]);
    assertEquals(entries.find((e) => e.port === port)?.free, false);
  });
});

Deno.test("svc ports says 'in use' without a state file, and names the process when /proc is readable", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  await withHome(async (home) => {
    const env = { SVC_LLM_PORT: String(port) };
    const narrow = await runCli(["ports"], { perms: perms(home), home, env });
    assertEquals(narrow.code, 0, narrow.stderr);
    assertMatch(narrow.stdout, new RegExp(`${port}\\s+SVC_LLM_PORT\\s+in use\\n?`));
    if (Deno.build.os === "linux") {
      // Deno reads /proc only with --allow-all.
      const all = await runCli(["ports"], { perms: ["--allow-all"], home, env });
      assertEquals(all.code, 0, all.stderr);
      assertMatch(
        all.stdout,
        new RegExp(`${port}\\s+SVC_LLM_PORT\\s+in use\\s+\\S+ \\(pid ${Deno.pid}\\)`),
      );
    }
    const noNet = await runCli(["ports"], { perms: ["--allow-env", `--allow-read=${home}`], home });
    assertEquals(noNet.code, 78);
    assertMatch(noNet.stderr, /--allow-net=0\.0\.0\.0/);
  });
});

Deno.test("portTable() merges ports that share a number and adds configured ports only when new", () => {
  const table = portTable(8001, 9999);
  assertEquals(table.get(8901), ["LLM_WSL_FALLBACK", "BENCHMARK_LLM"]);
  assertEquals(table.get(8001), ["LLM_DEFAULT"]);
  assertEquals(table.get(9999), ["SVC_EMBEDDING_PORT"]);
});

Deno.test("servePorts() describes the ports of a running serve, and nothing once it stopped", async () => {
  const running = await servePorts({
    pid: Deno.pid,
    gatewayPort: 8000,
    llmPort: 8001,
    chatModel: "demo/chat",
    llmPid: 11,
    embeddingPort: 8090,
  });
  assertEquals([...running], [
    [8000, `svc llm serve: gateway (pid ${Deno.pid})`],
    [8001, "svc llm serve: chat engine demo/chat (pid 11)"],
    [8090, `svc llm serve: embedding engine (pid ${Deno.pid})`],
  ]);
  assertEquals((await servePorts({ gatewayPort: 8000, llmPort: 8001 })).size, 0, "no pid: stopped");
  assertEquals((await servePorts(null)).size, 0);
  // A pid that no longer runs (checked because this test has --allow-run).
  const child = new Deno.Command(Deno.execPath(), { args: ["--version"], stdout: "null" }).spawn();
  await child.status;
  assertEquals((await servePorts({ pid: child.pid, gatewayPort: 8000 })).size, 0);
});
