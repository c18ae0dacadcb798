// `svc llm serve` during start-up: the gateway answers before its engines are ready, and then it
// lists the configured models as loading and holds requests for them until they are ready.
import { join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { getFreePort } from "../../src/core/network.ts";
import { CHILD_HOME } from "../gateway/_child_home.ts";
import { svcCommand } from "../_helpers/svc_command.ts";

Deno.test("svc llm serve lists its models as loading from its first answer, and holds a chat until the model is ready", async () => {
  const dir = await Deno.makeTempDir();
  const port = getFreePort();
  const child = svcCommand([
    ...["llm", "serve", "--model", "demo/chat", "--embedding-model", "demo/embed"],
    ...["--port", String(port), "--llm-port", "0", "--embedding-port", "0"],
    ...["--device", "cpu", "--offline", "--state-file", join(dir, "serve.env")],
  ], {
    env: { SVC_HOME: CHILD_HOME, SVC_CHAT_API_KEY: "", NO_COLOR: "1" },
    stdout: "null",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const base = `http://127.0.0.1:${port}/v1`;
  try {
    let first: Response | null = null;
    const deadline = Date.now() + 60_000;
    while (first === null && Date.now() < deadline) {
      first = await fetch(`${base}/models`).catch(() => null);
      if (first === null) await new Promise((r) => setTimeout(r, 20));
    }
    assertEquals(first?.status, 200, "the gateway answered");
    const listed = (await first!.json()).data.map((m: { id: string; status: string }) =>
      `${m.id}:${m.status}`
    ).sort();
    // The engines take well over a second to load; the gateway answers as soon as it listens.
    assertEquals(listed, ["demo/chat:loading", "demo/embed:loading"]);

    const chat = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo/chat", messages: [{ role: "user", content: "hi" }] }),
    });
    assertEquals(chat.status, 200, await chat.clone().text());
    assertEquals((await chat.json()).object, "chat.completion");
    const now = await (await fetch(`${base}/models/demo/chat`)).json();
    assertEquals(now.status, "ready");
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await stderr;
    await Deno.remove(dir, { recursive: true });
  }
});
