// `svc llm chat` as a subprocess: against a real engine server on demo/chat (random weights),
// and against a recording stand-in that checks what the REPL sends.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { startEngineServer } from "../../src/server/engine_server.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { ROOT, runCli, withHome } from "./_run_cli.ts";
import { join } from "node:path";
import { updateServeState } from "../../src/cli/serve_state.ts";

setupLogger("error");

const PERMS = ["--allow-env", "--allow-net=127.0.0.1"];

async function demoServer() {
  const server = await startEngineServer({
    model: "demo/chat",
    kind: "chat",
    hostname: "127.0.0.1",
    port: 0,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
  });
  await server.ready;
  return server;
}

/** An OpenAI-compatible stand-in that streams "reply N" and records every chat request. */
function recordingServer(
  options: {
    apiKey?: string;
    failMidStream?: boolean;
    /** Answers the first chat request 503 (a model loading, Retry-After: 1). */
    loadingFirst?: boolean;
    models?: { id: string; kind?: string }[];
  } = {},
) {
  const bodies: { messages: { role: string; content: string }[]; [k: string]: unknown }[] = [];
  const auth: (string | null)[] = [];
  let loaded = false;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    auth.push(req.headers.get("authorization"));
    if (options.apiKey && req.headers.get("authorization") !== `Bearer ${options.apiKey}`) {
      return Response.json(
        { error: { message: "bad key", type: "auth", code: "invalid_api_key" } },
        {
          status: 401,
        },
      );
    }
    if (path === "/v1/models") {
      const models = options.models ?? [{ id: "embedder", kind: "embedding" }, { id: "chatty" }];
      return Response.json({
        object: "list",
        data: models.map((m) => ({ object: "model", ...m })),
      });
    }
    if (path === "/v1/chat/completions") {
      const body = await req.json();
      if (options.loadingFirst && !loaded) {
        loaded = true;
        return Response.json(
          { error: { message: "still loading", type: "service_unavailable_error" } },
          { status: 503, headers: { "retry-after": "1" } },
        );
      }
      bodies.push(body);
      const n = bodies.length;
      const events = [
        { choices: [{ index: 0, delta: { role: "assistant", content: "" } }] },
        { choices: [{ index: 0, delta: { content: `reply ` } }] },
        options.failMidStream
          ? { error: { message: "engine crashed", type: "server_error" } }
          : { choices: [{ index: 0, delta: { content: `${n}` }, finish_reason: "stop" }] },
      ];
      const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") +
        "data: [DONE]\n\n";
      return new Response(text, { headers: { "content-type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    bodies,
    auth,
    close: () => server.shutdown(),
  };
}

Deno.test("svc llm chat --prompt streams a reply from a real engine server", async () => {
  const server = await demoServer();
  try {
    await withHome(async (home) => {
      const result = await runCli(
        ["llm", "chat", "--base-url", server.baseUrl, "--prompt", "Hello!", "--max-tokens", "6"],
        { perms: PERMS, home },
      );
      assertEquals(result.code, 0, result.stderr);
      assert(result.stdout.trim().length > 0, "the reply is printed");
      assert(result.stdout.endsWith("\n"));
      assertMatch(result.stderr, /random weights/);
    });
  } finally {
    await server.stop();
  }
});

Deno.test("svc llm chat REPL: a turn the server refuses is reported, left out, and the chat goes on", async () => {
  const server = await demoServer();
  try {
    await withHome(async (home) => {
      // The second line is over demo/chat's 2048-token context: a 400 for that turn only.
      const result = await runCli(
        ["llm", "chat", "--base-url", server.baseUrl, "--max-tokens", "4"],
        { perms: PERMS, home, stdin: `hi\n${"word ".repeat(3000)}\nafter\n` },
      );
      assertEquals(result.code, 65, "the exit code says a turn failed");
      // The turns before and after it are answered (counted by the server: a random-weight reply
      // may itself hold line breaks).
      const metrics = await (await fetch(`${server.served.url}/metrics`)).text();
      const answered = (status: number) =>
        metrics.split("\n").filter((l) =>
          l.startsWith("svc_http_requests_total{") &&
          l.includes('route="/v1/chat/completions"') && l.includes(`status="${status}"`)
        ).map((l) => Number(l.split(" ").at(-1)));
      assertEquals([answered(200), answered(400)], [[2], [1]], metrics);
      const errors = result.stderr.split("\n").filter((l) => l.startsWith("svc: "));
      assertEquals(errors.length, 1, result.stderr);
      assertMatch(errors[0], /context of 2048 tokens.*\(\/reset clears the conversation\)$/);
    });
  } finally {
    await server.stop();
  }
});

Deno.test("svc llm chat REPL keeps the conversation, /reset clears it, /exit ends it", async () => {
  const server = recordingServer({ apiKey: "k-123" });
  try {
    await withHome(async (home) => {
      const result = await runCli(
        ["llm", "chat", "--system", "Be brief.", "--temperature", "0.5", "--max-tokens", "7"],
        {
          perms: PERMS,
          home,
          env: { SVC_CHAT_BASE_URL: server.baseUrl, SVC_CHAT_API_KEY: "k-123" },
          stdin: "hi\nmore\n/reset\nagain\n/exit\nnever sent\n",
        },
      );
      assertEquals(result.code, 0, result.stderr);
      assertEquals(result.stdout, "reply 1\nreply 2\nreply 3\n");
      assertEquals(server.bodies.length, 3);
      const roles = server.bodies.map((b) => b.messages.map((m) => `${m.role}:${m.content}`));
      assertEquals(roles[0], ["system:Be brief.", "user:hi"]);
      assertEquals(roles[1], ["system:Be brief.", "user:hi", "assistant:reply 1", "user:more"]);
      assertEquals(roles[2], ["system:Be brief.", "user:again"], "/reset keeps only the system");
      assertEquals(server.bodies[0].model, "chatty", "the first non-embedding model is used");
      assertEquals(server.bodies[0].stream, true);
      assertEquals(server.bodies[0].temperature, 0.5);
      assertEquals(server.bodies[0].max_tokens, 7);
      assert(server.auth.every((a) => a === "Bearer k-123"), "the key is sent on every request");
    });
  } finally {
    await server.close();
  }
});

Deno.test("svc llm chat ends at end of input and reports an error sent mid-stream", async () => {
  const server = recordingServer({ failMidStream: true });
  try {
    await withHome(async (home) => {
      const result = await runCli(["llm", "chat", "--base-url", server.baseUrl, "--model", "m"], {
        perms: PERMS,
        home,
        stdin: "first",
      });
      assertEquals(result.code, 69);
      assertMatch(result.stderr, /failed mid-reply: engine crashed/);
      assertEquals(server.bodies[0].model, "m");
      assertEquals(result.stderr.trim().split("\n").length, 1, "one line");
    });
  } finally {
    await server.close();
  }
});

Deno.test("svc llm chat --prompt | head: the reader going away ends it quietly and stops the reply", async () => {
  // A server whose reply never ends: only the closed pipe can end the command.
  let cancelled: () => void;
  const replyCancelled = new Promise<void>((resolve) => (cancelled = resolve));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname === "/v1/models") {
      return Response.json({ object: "list", data: [{ id: "m", object: "model" }] });
    }
    const chunk = new TextEncoder().encode(
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "word " } }] })}\n\n`,
    );
    let timer: ReturnType<typeof setInterval>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => void (timer = setInterval(() => c.enqueue(chunk), 5)),
      cancel: () => {
        clearInterval(timer);
        cancelled();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    await withHome(async (home) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          `--config=${join(ROOT, "deno.json")}`,
          ...PERMS,
          join(ROOT, "cli.ts"),
        ]
          .concat(["llm", "chat", "--prompt", "hi"]),
        cwd: home,
        clearEnv: true,
        env: {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: Deno.env.get("HOME") ?? home,
          ...(Deno.env.has("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
          SVC_HOME: home,
          SVC_CHAT_BASE_URL: `http://127.0.0.1:${server.addr.port}/v1`,
        },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // As `head -c 1` does: read a little of the reply, then close the pipe.
      const reader = child.stdout.getReader();
      await reader.read();
      await reader.cancel();
      const [status, stderr] = await Promise.all([
        child.status,
        new Response(child.stderr).text(),
      ]);
      assertEquals(stderr, "", "no error, no stack");
      assertEquals(status.code, 141, "the status of a tool that SIGPIPE ended");
      await replyCancelled;
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("svc llm chat says which URLs it tried and how to start a server when none answers", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await withHome(async (home) => {
    const result = await runCli(["llm", "chat", "--prompt", "hi"], {
      perms: PERMS,
      home,
      env: { SVC_CHAT_BASE_URL: `http://127.0.0.1:${port}` },
    });
    assertEquals(result.code, 69);
    assertMatch(result.stderr, new RegExp(`http://127\\.0\\.0\\.1:${port}/v1`));
    assertMatch(result.stderr, /svc llm serve/);
    assertEquals(result.stdout, "");

    // No URL given: the default search, every address in its order (the default ports are
    // empty for the command whatever runs on this machine).
    const searched = await runCli(["llm", "chat", "--prompt", "hi"], {
      perms: PERMS,
      home,
      env: { SVC_LLM_PORT: String(port) },
      emptyDefaultPorts: true,
    });
    assertEquals(searched.code, 69, searched.stderr);
    const tried = [8000, port, 8001, 8901].map((p) => `http://127.0.0.1:${p}/v1`).join(", ");
    assert(searched.stderr.includes(`answered at ${tried}:`), searched.stderr);
    assertEquals(searched.stdout, "");
  });
});

Deno.test("svc llm chat: a rejected key exits 77 naming SVC_CHAT_API_KEY; bad options exit 65", async () => {
  const server = recordingServer({ apiKey: "right" });
  try {
    await withHome(async (home) => {
      const wrong = await runCli(["llm", "chat", "--base-url", server.baseUrl, "--prompt", "x"], {
        perms: PERMS,
        home,
        env: { SVC_CHAT_API_KEY: "wrong" },
      });
      assertEquals(wrong.code, 77);
      assertMatch(wrong.stderr, /SVC_CHAT_API_KEY/);
      for (const value of ["hot", "0x1", ""]) {
        const bad = await runCli(["llm", "chat", "--temperature", value], { perms: PERMS, home });
        assertEquals(bad.code, 65, value);
        assertMatch(bad.stderr, /--temperature is '.*': expected a decimal number/);
      }
      const unknown = await runCli(["llm", "chat", "--bogus"], { perms: PERMS, home });
      assertEquals(unknown.code, 65);
      const help = await runCli(["llm", "chat", "--help"], { perms: [], home });
      assertEquals(help.code, 0);
      assertMatch(help.stdout, /Permissions: --allow-net/);
    });
  } finally {
    await server.close();
  }
});

Deno.test("svc llm chat waits for a loading model, and needs a chat model to talk to", async () => {
  const loading = recordingServer({ loadingFirst: true });
  const embedOnly = recordingServer({
    models: [{ id: "demo/rerank", kind: "rerank" }, { id: "demo/embed", kind: "embedding" }],
  });
  try {
    await withHome(async (home) => {
      const waited = await runCli(["llm", "chat", "--base-url", loading.baseUrl, "--prompt", "x"], {
        perms: PERMS,
        home,
      });
      assertEquals(waited.code, 0, waited.stderr);
      assertEquals(waited.stdout, "reply 1\n");
      assertMatch(waited.stderr, /the server is loading the model; waiting/);
      const none = await runCli(["llm", "chat", "--base-url", embedOnly.baseUrl, "--prompt", "x"], {
        perms: PERMS,
        home,
      });
      assertEquals(none.code, 65);
      assertMatch(none.stderr, /lists no chat model \(only demo\/rerank, demo\/embed\)/);
      assertEquals(embedOnly.bodies.length, 0);
    });
  } finally {
    await Promise.all([loading.close(), embedOnly.close()]);
  }
});

Deno.test("svc llm chat finds the gateway of a running svc llm serve in SVC_HOME, and SVC_LLM_PORT", async () => {
  const served = recordingServer({ models: [{ id: "served-chat", kind: "chat" }] });
  const engine = recordingServer({ models: [{ id: "port-chat", kind: "chat" }] });
  try {
    await withHome(async (home) => {
      await Deno.mkdir(join(home, "engines"));
      // As `svc llm serve --port …` records itself (src/cli/serve_state.ts).
      await updateServeState(join(home, "engines", "serve.env"), {
        pid: Deno.pid,
        gatewayUrl: served.baseUrl,
      });
      const viaState = await runCli(["llm", "chat", "--prompt", "Hello"], {
        perms: [...PERMS, `--allow-read=${home}`],
        home,
      });
      assertEquals(viaState.code, 0, viaState.stderr);
      assertEquals(viaState.stdout, "reply 1\n");
      assertEquals(served.bodies.at(-1)?.model, "served-chat");
    });
    await withHome(async (home) => {
      const port = new URL(engine.baseUrl).port;
      // The default gateway (8000) is searched before SVC_LLM_PORT: empty for the command, so
      // a server someone runs there on this machine does not answer in the engine's place.
      const viaPort = await runCli(["llm", "chat", "--prompt", "Hello"], {
        perms: PERMS,
        home,
        env: { SVC_LLM_PORT: port },
        emptyDefaultPorts: true,
      });
      assertEquals(viaPort.code, 0, viaPort.stderr);
      assertEquals(viaPort.stdout, "reply 1\n");
      assertEquals(engine.bodies.at(-1)?.model, "port-chat");
    });
  } finally {
    await Promise.all([served.close(), engine.close()]);
  }
});

Deno.test("svc llm chat: --base-url that is not a URL, and a refused key names the variable only", async () => {
  const server = recordingServer({ apiKey: "right" });
  try {
    await withHome(async (home) => {
      const bad = await runCli(["llm", "chat", "--base-url", "notaurl", "--prompt", "x"], {
        perms: PERMS,
        home,
      });
      assertEquals(bad.code, 65);
      assertMatch(bad.stderr, /--base-url is 'notaurl': expected an http\(s\) URL/);
      const wrong = await runCli(["llm", "chat", "--base-url", server.baseUrl, "--prompt", "x"], {
        perms: PERMS,
        home,
        env: { SVC_CHAT_API_KEY: "wrong" },
      });
      assertEquals(wrong.code, 77);
      assertMatch(wrong.stderr, /check SVC_CHAT_API_KEY/);
      assert(!/apiKey option/.test(wrong.stderr), wrong.stderr);
    });
  } finally {
    await server.close();
  }
});
