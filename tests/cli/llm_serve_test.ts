// `svc llm serve | status | stop` as real subprocesses: the gateway and its engine children on
// free ports, the state file, draining stop, background mode, and the one-line failures.
import OpenAI from "openai";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { readServeState } from "../../src/cli/serve_state.ts";
import { isProcessAlive } from "../../src/cli/serve_state.ts";
import { getFreePort } from "../../src/core/network.ts";
import { CHILD_HOME } from "../gateway/_child_home.ts";
import { SVC_ALL_PERMISSIONS, svcCommand } from "../_helpers/svc_command.ts";

const ENV = { SVC_HOME: CHILD_HOME, SVC_LOG_LEVEL: "warn", SVC_CHAT_API_KEY: "", NO_COLOR: "1" };

function svc(args: string[], perms = SVC_ALL_PERMISSIONS): Deno.Command {
  return svcCommand(args, { env: ENV, perms });
}

async function run(args: string[], perms = SVC_ALL_PERMISSIONS) {
  const out = await svc(args, perms).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

// Reads stdout until a line matches; the rest keeps draining in the background.
async function readUntil(
  stream: ReadableStream<Uint8Array>,
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<{ text: string; rest: Promise<string> }> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${pattern} in: ${text}`)), timeoutMs);
  });
  try {
    while (!pattern.test(text)) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next.done) throw new Error(`the process ended before ${pattern}: ${text}`);
      text += next.value;
    }
  } finally {
    clearTimeout(timer);
  }
  const rest = (async () => {
    let more = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) more += r.value;
    return more;
  })();
  return { text, rest };
}

async function portFree(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return false;
  } catch {
    return true;
  }
}

// `svc llm serve` of demo/chat on free ports (plus `extra` flags), its state file in a temporary
// folder; `cleanup` kills what is still running and removes the folder.
async function spawnServe(extra: string[] = []) {
  const dir = await Deno.makeTempDir();
  const state = join(dir, "serve.env");
  const child = svc([
    "llm",
    "serve",
    "--model",
    "demo/chat",
    "--port",
    "0",
    "--llm-port",
    "0",
    "--device",
    "cpu",
    "--offline",
    "--state-file",
    state,
    ...extra,
  ]).spawn();
  const stderr = new Response(child.stderr).text();
  const cleanup = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await child.status;
    await stderr;
    await Deno.remove(dir, { recursive: true });
  };
  return { child, state, cleanup };
}

Deno.test("svc llm serve: gateway + chat + embeddings + rerank on free ports; status reads the state; stop drains and stops all", async () => {
  const { child, state, cleanup } = await spawnServe([
    "--with-embedding",
    "--embedding-model",
    "demo/embed",
    "--rerank-model",
    "demo/rerank",
    "--embedding-port",
    "0",
    "--dtype",
    "fp32",
  ]);
  try {
    const { text, rest } = await readUntil(child.stdout, /svc: state/);
    assertMatch(text, /svc: gateway {3}http:\/\/127\.0\.0\.1:\d+\/v1/);
    assertMatch(text, /svc: browser {3}http:\/\/127\.0\.0\.1:\d+\/ {2}\(playground/);
    // The chat engine loads the dtype named; the embedding engine the cpu default (q8).
    assertMatch(
      text,
      /svc: chat {6}demo\/chat at http:\/\/127\.0\.0\.1:\d+\/v1 \(fp32\) — RANDOM weights/,
    );
    // The reranker runs in the embedding engine, on its port.
    assertMatch(text, /svc: embedding demo\/embed, demo\/rerank at http:\/\/\S+ \(q8\)/);

    const s = (await readServeState(state))!;
    assertEquals(s.pid, child.pid);
    assert(s.llmPort! > 0 && s.embeddingPort! > 0 && s.llmPort !== s.embeddingPort);
    assertEquals(s.chatModel, "demo/chat");
    assertEquals(s.embeddingModel, "demo/embed");
    assert(isProcessAlive(s.llmPid) && isProcessAlive(s.embeddingPid));
    const envText = await Deno.readTextFile(state);
    assertMatch(envText, new RegExp(`^SVC_LLM_PORT=${s.llmPort}$`, "m"));
    assertMatch(envText, new RegExp(`^SVC_EMBEDDING_PORT=${s.embeddingPort}$`, "m"));

    const status = await run(["llm", "status", "--json", "--state-file", state]);
    assertEquals(status.code, 0, status.stderr);
    const report = JSON.parse(status.stdout);
    assertEquals(report.running, true);
    assertEquals(report.cluster.ready, true);
    assertEquals(report.engines.map((e: { state: string }) => e.state), ["ready", "ready"]);
    const plain = await run(["llm", "status", "--state-file", state]);
    assertMatch(plain.stdout, /svc: running \(pid \d+\) — gateway .* \(ready\)/);

    const gateway = new OpenAI({ baseURL: s.gatewayUrl!, apiKey: "unused", maxRetries: 0 });
    const chat = await gateway.chat.completions.create({
      model: "demo/chat",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 4,
    });
    assertEquals(chat.object, "chat.completion");
    const viaGateway = await gateway.embeddings.create({ model: "demo/embed", input: ["a", "b"] });
    assertEquals(viaGateway.data.length, 2);
    const rerank = await fetch(`${s.gatewayUrl}/rerank`, {
      method: "POST",
      body: JSON.stringify({ model: "demo/rerank", query: "q", documents: ["a", "b"], top_n: 1 }),
    });
    assertEquals(rerank.status, 200);
    assertEquals((await rerank.json()).results.length, 1);
    const models = await (await fetch(`${s.gatewayUrl}/models`)).json();
    const kinds = Object.fromEntries(
      models.data.map((m: { id: string; kind: string }) => [m.id, m.kind]),
    );
    // The reranker runs in the embedding engine but is listed as what it does.
    assertEquals(kinds, {
      "demo/chat": "chat",
      "demo/embed": "embedding",
      "demo/rerank": "rerank",
    });
    const direct = new OpenAI({ baseURL: s.embeddingUrl!, apiKey: "unused", maxRetries: 0 });
    assertEquals(
      (await direct.embeddings.create({ model: "demo/embed", input: "a" })).data.length,
      1,
    );

    const stop = await run(["llm", "stop", "--state-file", state]);
    assertEquals(stop.code, 0, stop.stderr);
    assertMatch(stop.stdout, /svc: stopped \(pid \d+\); requests were drained/);
    assertEquals((await child.status).code, 0);
    assertMatch(await rest, /svc: stopping/);
    assert(!isProcessAlive(s.llmPid) && !isProcessAlive(s.embeddingPid), "engines stopped");
    assert(await portFree(s.llmPort!) && await portFree(s.embeddingPort!));
    const after = await run(["llm", "status", "--state-file", state]);
    assertEquals(after.code, 3);
    assertMatch(after.stdout, /not running/);
    assertEquals((await readServeState(state))!.llmPort, s.llmPort, "the ports stay recorded");
  } finally {
    await cleanup();
  }
});

Deno.test("svc llm serve --embedding-in-gateway: embeddings and rerank served from the gateway's process; stop stops it", async () => {
  const { child, state, cleanup } = await spawnServe([
    "--embedding-in-gateway",
    "--embedding-model",
    "demo/embed",
    "--rerank-model",
    "demo/rerank",
  ]);
  try {
    const { text, rest } = await readUntil(child.stdout, /svc: state/);
    assertMatch(
      text,
      /starting the embedding engine \(demo\/embed, reranker demo\/rerank\) in the gateway's process/,
    );
    assertMatch(text, /svc: embedding demo\/embed, demo\/rerank in the gateway's process \(q8\)/);
    const s = (await readServeState(state))!;
    assertEquals(s.embeddingModel, "demo/embed");
    assertEquals([s.embeddingPid, s.embeddingPort, s.embeddingUrl], [
      undefined,
      undefined,
      undefined,
    ]);

    const report = JSON.parse(
      (await run(["llm", "status", "--json", "--state-file", state])).stdout,
    );
    const embedding = report.engines.find((e: { id: string }) => e.id === "embedding");
    assertEquals([embedding.state, embedding.placement, embedding.pid, embedding.port], [
      "ready",
      "gateway",
      child.pid,
      null,
    ]);

    const plain = await run(["llm", "status", "--state-file", state]);
    assertMatch(
      plain.stdout,
      /embedding +embedding +demo\/embed, demo\/rerank +\(in the gateway\) +ready/,
    );

    const gateway = new OpenAI({ baseURL: s.gatewayUrl!, apiKey: "unused", maxRetries: 0 });
    const embedded = await gateway.embeddings.create({ model: "demo/embed", input: ["a", "b"] });
    assertEquals(embedded.data.length, 2);
    const rerank = await fetch(`${s.gatewayUrl}/rerank`, {
      method: "POST",
      body: JSON.stringify({ model: "demo/rerank", query: "q", documents: ["a", "b"], top_n: 1 }),
    });
    assertEquals(rerank.status, 200);
    assertEquals((await rerank.json()).results.length, 1);

    const stop = await run(["llm", "stop", "--state-file", state]);
    assertEquals(stop.code, 0, stop.stderr);
    assertEquals((await child.status).code, 0);
    assertMatch(await rest, /svc: stopping/);
  } finally {
    await cleanup();
  }
});

Deno.test("svc llm serve: --embedding-in-gateway with --embedding-port is one line naming both", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const both = await run([
      "llm",
      "serve",
      "--embedding-in-gateway",
      "--embedding-port",
      "0",
      "--offline",
      "--state-file",
      join(dir, "serve.env"),
    ]);
    assertEquals(both.code, 78, both.stderr);
    assertEquals(both.stderr.trim().split("\n").length, 1, both.stderr);
    assertMatch(both.stderr, /--embedding-port and --embedding-in-gateway contradict each other/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("svc llm serve: engines stop on their own when the gateway is killed with SIGKILL", async () => {
  const { child, state, cleanup } = await spawnServe();
  try {
    const { rest } = await readUntil(child.stdout, /svc: state/);
    const s = (await readServeState(state))!;
    assert(!(await portFree(s.llmPort!)), "the engine listens");
    child.kill("SIGKILL");
    await child.status;
    await rest;
    // No handler runs on SIGKILL: the engine notices its closed stdin pipe and shuts down.
    const deadline = Date.now() + 20_000;
    while (!(await portFree(s.llmPort!)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert(await portFree(s.llmPort!), "the orphaned engine stopped");
  } finally {
    await cleanup();
  }
});

Deno.test("svc llm serve: port in use, model not found, missing permission — one line, non-zero, nothing left", async () => {
  const dir = await Deno.makeTempDir();
  const state = join(dir, "serve.env");
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const busy = await run([
      "llm",
      "serve",
      "--port",
      String(taken.addr.port),
      "--offline",
      "--state-file",
      state,
    ]);
    assertEquals(busy.code, 78);
    assertEquals(busy.stdout, "");
    assertEquals(busy.stderr.trim().split("\n").length, 1, busy.stderr);
    assertMatch(busy.stderr, /^svc: port \d+ on 127\.0\.0\.1 is already in use; .*--port/);
    // A chat engine port in use names --llm-port, the flag that asked for it.
    const busyLlm = await run([
      "llm",
      "serve",
      "--port",
      "0",
      "--llm-port",
      String(taken.addr.port),
      "--offline",
      "--state-file",
      state,
    ]);
    assertEquals(busyLlm.code, 78);
    assertEquals(busyLlm.stderr.trim().split("\n").length, 1, busyLlm.stderr);
    assertMatch(
      busyLlm.stderr,
      /^svc: port \d+ on 127\.0\.0\.1 is already in use; .*--llm-port <other>/,
    );
    // A demo model of another kind: the flag serve takes it with, not run's --kind.
    // (Port 0: the default 8000 may be taken on this machine, and the port is checked first.)
    const wrongKind = await run([
      "llm",
      "serve",
      "--model",
      "demo/embed",
      "--port",
      "0",
      "--state-file",
      state,
    ]);
    assert(wrongKind.code !== 0);
    assertEquals(wrongKind.stderr.trim().split("\n").length, 1, wrongKind.stderr);
    assertMatch(
      wrongKind.stderr,
      /^svc: demo\/embed is an embedding model, not a chat model; pass it as --embedding-model demo\/embed/,
    );
    // A bad --device names the flag, not SVC_DEVICE.
    const badDevice = await run([
      "llm",
      "serve",
      "--device",
      "gpu",
      "--port",
      "0",
      "--state-file",
      state,
    ]);
    assert(badDevice.code !== 0);
    assertMatch(
      badDevice.stderr,
      /^svc: --device is 'gpu': expected one of auto, webgpu, cpu, wasm/,
    );
    assert(!badDevice.stderr.includes("SVC_DEVICE"), badDevice.stderr);

    const llmPort = getFreePort();
    const missing = await run([
      "llm",
      "serve",
      "--model",
      "nobody/no-such-model",
      "--port",
      "0",
      "--llm-port",
      String(llmPort),
      "--offline",
      "--state-file",
      state,
    ]);
    assert(missing.code !== 0);
    assertEquals(missing.stderr.trim().split("\n").length, 1, missing.stderr);
    assertMatch(
      missing.stderr,
      /^svc: the chat engine for nobody\/no-such-model failed to start: /,
    );
    assert(await portFree(llmPort), "no engine left running");
    assertEquals((await readServeState(state))?.pid, undefined);

    // A typo of a demo model: one line with the demo model it meant, before anything starts.
    const typo = await run([
      "llm",
      "serve",
      "--model",
      "demo/chatt",
      "--port",
      "0",
      "--offline",
      "--state-file",
      state,
    ]);
    assert(typo.code !== 0);
    assertEquals(typo.stderr.trim().split("\n").length, 1, typo.stderr);
    assertMatch(
      typo.stderr,
      /^svc: 'demo\/chatt' is not a demo model; did you mean 'demo\/chat'\?/,
    );

    // A dtype that does not exist, and one the model has no file for.
    const badDtype = await run([
      "llm",
      "serve",
      "--dtype",
      "fp8",
      "--port",
      "0",
      "--state-file",
      state,
    ]);
    assert(badDtype.code !== 0);
    assertMatch(
      badDtype.stderr,
      /--dtype is 'fp8': expected one of fp32, fp16, q8, int8, uint8, q4, q4f16, bnb4/,
    );
    const lacking = await run([
      "llm",
      "serve",
      "--model",
      "demo/chat",
      "--dtype",
      "q4f16",
      "--port",
      "0",
      "--llm-port",
      "0",
      "--offline",
      "--state-file",
      state,
    ]);
    assert(lacking.code !== 0);
    assertEquals(lacking.stderr.trim().split("\n").length, 1, lacking.stderr);
    assertMatch(lacking.stderr, /no q4f16 weights .*it has fp32, q8/);

    const noNet = await run(
      ["llm", "serve", "--port", "0", "--offline", "--state-file", state],
      ["--allow-read", "--allow-write", "--allow-env"],
    );
    assert(noNet.code !== 0);
    assertEquals(noNet.stderr.trim().split("\n").length, 1, noNet.stderr);
    assertMatch(noNet.stderr, /--allow-(net|run)/);
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("svc llm serve --background: detaches, prints the endpoints (random weights said), exits 0; stop ends it", async () => {
  const dir = await Deno.makeTempDir();
  const state = join(dir, "serve.env");
  let pid: number | undefined;
  try {
    const started = await run([
      "llm",
      "serve",
      "--model",
      "demo/chat",
      "--port",
      "0",
      "--llm-port",
      "0",
      "--device",
      "cpu",
      "--offline",
      // No embedding model named: the default cannot be downloaded offline, so demo/embed.
      "--with-embedding",
      "--embedding-port",
      "0",
      "--background",
      "--state-file",
      state,
    ]);
    assertEquals(started.code, 0, started.stderr);
    assertMatch(started.stdout, /running in the background \(pid \d+\)/);
    assertMatch(started.stdout, /svc: gateway {3}http:\/\/127\.0\.0\.1:\d+\/v1/);
    // The playground's address, as foreground serve prints it.
    assertMatch(started.stdout, /svc: browser {3}http:\/\/127\.0\.0\.1:\d+\/ {2}\(playground/);
    assertMatch(started.stdout, /svc: chat {6}demo\/chat at \S+ \(q8\) — RANDOM weights/);
    assertMatch(
      started.stdout,
      /svc: embedding demo\/embed, demo\/rerank at \S+ \(q8\) — RANDOM weights \(demo model\); name a real model with --embedding-model$/m,
    );
    assert(!/with --model/.test(started.stdout), started.stdout);
    const s = (await readServeState(state))!;
    pid = s.pid;
    assert(isProcessAlive(pid), "the server outlives the command");
    const res = await fetch(`${s.gatewayUrl!.replace(/\/v1$/, "")}/health/ready`);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    // svc llm chat through the gateway says the model has random weights.
    const chat = await run(["llm", "chat", "--base-url", s.gatewayUrl!, "--prompt", "hi"]);
    assertEquals(chat.code, 0, chat.stderr);
    assertMatch(chat.stderr, /demo\/chat has random weights/);
    // svc llm model list shows what the running gateway serves.
    const list = await run(["llm", "model", "list", "--state-file", state]);
    assertEquals(list.code, 0, list.stderr);
    assertMatch(list.stdout, /Served now by 'svc llm serve'/);
    assertMatch(list.stdout, /^ {2}demo\/embed\s+embedding\s+ready\s+RANDOM weights/m);

    const again = await run(["llm", "serve", "--port", "0", "--offline", "--state-file", state]);
    assertEquals(again.code, 75);
    assertMatch(again.stderr, /^svc: svc llm serve is already running \(pid \d+/);

    const stop = await run(["llm", "stop", "--state-file", state]);
    assertEquals(stop.code, 0, stop.stderr);
    assert(!isProcessAlive(pid) && !isProcessAlive(s.llmPid));
    assert(await portFree(s.llmPort!));
  } finally {
    // Also when an assertion failed before the stop above: nothing it started outlives the test.
    if (await readServeState(state).catch(() => null)) {
      await run(["llm", "stop", "--state-file", state]);
    }
    if (pid !== undefined && isProcessAlive(pid)) Deno.kill(pid, "SIGKILL");
    await Deno.remove(dir, { recursive: true });
  }
});
