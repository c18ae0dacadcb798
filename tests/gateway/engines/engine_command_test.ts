// The command a started engine runs with: `cli.ts llm run` under scoped permissions.
import { assert, assertEquals } from "../../_assert.ts";
import {
  connectHost,
  engineCommand,
  type EngineProcessSpec,
  remoteImportFlags,
} from "../../../src/gateway/engines/engine_command.ts";
import { Dispatcher } from "../../../src/gateway/dispatcher.ts";
import { EngineManager } from "../../../src/gateway/engines/engine_manager.ts";

Deno.test("engineCommand() scopes net to the listen address, and adds the hub only when needed", () => {
  const demo = engineCommand({
    model: "demo/chat",
    kind: "chat",
    hostname: "127.0.0.1",
    port: 8001,
    home: "/tmp/h",
    apiKey: "secret",
  });
  const flags = demo.args.filter((a) => a.startsWith("--allow"));
  assert(flags.includes("--allow-net=127.0.0.1:8001"), flags.join(" "));
  assert(flags.includes("--allow-write=/tmp/h"));
  assert(!flags.includes("--allow-run") && !flags.includes("--allow-net"), "no run, no open net");
  assert(flags.some((f) => f.startsWith("--allow-read=") && f.includes("/tmp/h")));
  assertEquals(demo.args.slice(demo.args.indexOf("llm")), [
    "llm",
    "run",
    "--kind",
    "chat",
    "--port",
    "8001",
    "--host",
    "127.0.0.1",
    "--stop-with-stdin",
    "--cors-origins",
    "none",
    "--model",
    "demo/chat",
  ]);
  assert(!demo.args.join(" ").includes("secret"), "the key goes in the environment");
  assertEquals(demo.env.ENGINE_API_KEY, "secret");
  assertEquals(demo.env.SVC_HOME, "/tmp/h");

  const hub = engineCommand({
    model: "org/model",
    kind: "embedding",
    hostname: "0.0.0.0",
    port: 8090,
    home: "/tmp/h",
    hubEndpoint: "https://hf-mirror.com",
  });
  const net = hub.args.find((a) => a.startsWith("--allow-net="))!;
  assertEquals(
    net,
    "--allow-net=0.0.0.0:8090,127.0.0.1:8090,hf-mirror.com,cdn-lfs.huggingface.co," +
      "cdn-lfs.hf.co,cas-bridge.xethub.hf.co",
  );
  assertEquals(hub.env.HUB_ENDPOINT, "https://hf-mirror.com");
  assertEquals(hub.env.ENGINE_API_KEY, "", "no key: the child requires none");
});

Deno.test("connectHost() maps wildcard listen addresses to loopback", () => {
  assertEquals(connectHost("0.0.0.0"), "127.0.0.1");
  assertEquals(connectHost("::"), "::1");
  assertEquals(connectHost("[::1]"), "::1");
  assertEquals(connectHost("10.1.2.3"), "10.1.2.3");
});

Deno.test("engineCommand() passes per-request limits on as their llm run flags", () => {
  const cmd = engineCommand({
    kind: "chat",
    hostname: "127.0.0.1",
    port: 8001,
    home: "/tmp/h",
    limits: { maxN: 4, maxPromptTokens: 1000 },
  });
  const at = cmd.args.indexOf("--max-n");
  assertEquals(cmd.args.slice(at, at + 2), ["--max-n", "4"]);
  const tokens = cmd.args.indexOf("--max-prompt-tokens");
  assertEquals(cmd.args.slice(tokens, tokens + 2), ["--max-prompt-tokens", "1000"]);
});

Deno.test("engineCommand() passes --allow-fallback-adapter only when asked", () => {
  const spec = { kind: "chat" as const, hostname: "127.0.0.1", port: 8001, home: "/tmp/h" };
  const asked = engineCommand({ ...spec, device: "webgpu", allowFallbackAdapter: true });
  assert(asked.args.includes("--allow-fallback-adapter"), asked.args.join(" "));
  assert(!engineCommand(spec).args.includes("--allow-fallback-adapter"));
});

Deno.test("engineCommand() passes --prefix-cache-mib when set", () => {
  const spec = { kind: "chat" as const, hostname: "127.0.0.1", port: 8001, home: "/tmp/h" };
  const { args } = engineCommand({ ...spec, prefixCacheMib: 0 });
  const at = args.indexOf("--prefix-cache-mib");
  assertEquals(args.slice(at, at + 2), ["--prefix-cache-mib", "0"]);
  assert(!engineCommand(spec).args.includes("--prefix-cache-mib"));
});

Deno.test("engineCommand() starts engines that answer no web page (browsers use the gateway)", () => {
  const { args } = engineCommand({
    kind: "chat",
    hostname: "127.0.0.1",
    port: 8001,
    home: "/tmp/h",
  });
  assertEquals(args[args.indexOf("--cors-origins") + 1], "none");
});

Deno.test("EngineManager gives its allowFallbackAdapter to the engines it starts", async () => {
  const seen: EngineProcessSpec[] = [];
  const manager = new EngineManager(new Dispatcher(), {
    home: "/tmp/h",
    device: "webgpu",
    allowFallbackAdapter: true,
    portCandidates: () => [],
    // The command is only looked at: `true` exits at once, so the engine ends in error.
    supervisor: {
      command: (s) => (seen.push(s), { command: "true", args: [], env: {} }),
      maxRestartFailures: 0,
    },
  });
  try {
    const { engine } = await manager.startEngine({ model: "demo/chat" });
    await manager.whenReady(engine.id, { timeoutMs: 10_000 }).catch(() => {});
    assertEquals(seen[0]?.allowFallbackAdapter, true);
    assertEquals(seen[0]?.device, "webgpu");
  } finally {
    await manager.close();
  }
});

Deno.test("engineCommand() passes the reranker, with hub access only when it comes from the hub", async () => {
  const spec = {
    model: "demo/embed",
    kind: "embedding" as const,
    hostname: "127.0.0.1",
    port: 8090,
  };
  const demo = engineCommand({ ...spec, home: "/tmp/h", rerank: { model: "demo/rerank" } });
  const tail = demo.args.slice(demo.args.indexOf("--model"));
  assertEquals(tail, ["--model", "demo/embed", "--with-rerank", "--rerank-model", "demo/rerank"]);
  assert(demo.args.includes("--allow-net=127.0.0.1:8090"), "demo models need no hub");

  // The default reranker may be downloaded; a local folder is readable by the engine.
  const folder = await Deno.makeTempDir();
  try {
    const byDefault = engineCommand({ ...spec, home: "/tmp/h", rerank: {} });
    assert(byDefault.args.includes("--with-rerank"));
    assert(!byDefault.args.includes("--rerank-model"));
    assert(byDefault.args.some((a) => a.startsWith("--allow-net=") && a.includes("huggingface")));
    const local = engineCommand({ ...spec, home: "/tmp/h", rerank: { model: folder } });
    assert(local.args.some((a) => a.startsWith("--allow-read=") && a.includes(folder)));
  } finally {
    await Deno.remove(folder);
  }
});

Deno.test("remoteImportFlags() maps bare specifiers with the package's deno.json, except on JSR", () => {
  assertEquals(remoteImportFlags(new URL("http://127.0.0.1:4507/pkg/cli.ts")), [
    "--allow-import=127.0.0.1:4507",
    "--import-map=http://127.0.0.1:4507/pkg/deno.json",
  ]);
  // JSR rewrites bare specifiers at publish: no map to fetch.
  assertEquals(remoteImportFlags(new URL("https://jsr.io/@svc/cli/0.1.0/cli.ts")), [
    "--allow-import=jsr.io",
  ]);
});
