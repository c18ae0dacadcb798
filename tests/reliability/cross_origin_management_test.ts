// Attack: a web page the user visits drives the local gateway's management API from the browser
// (cross-origin requests with an Origin header and "simple" text/plain bodies, and a CORS
// preflight), to stop engines, start its own, or register its server for `demo/chat`. Against
// the real `svc llm serve` stack every call is refused, nothing changes, and a normal chat is
// still answered within 1 s. (A caller from another machine is refused too; with only loopback
// interfaces here, tests/server/admin_guard_test.ts checks that with a fake peer address.)
import { assert, assertEquals } from "../_assert.ts";
import { isProcessAlive } from "../../src/cli/serve_state.ts";
import { startServedStack, timeNormalChat } from "../_helpers/served_stack.ts";

const PAGE = { origin: "http://evil.example", "content-type": "text/plain" };

Deno.test("cross-origin management calls are refused, change nothing, and chat still answers within 1 s", async () => {
  const stack = await startServedStack();
  const v1 = stack.state.gatewayUrl!;
  const list = async (): Promise<{ id: string; state: string; pid: number }[]> => {
    const res = await fetch(`${v1}/management/engines`);
    assertEquals(res.status, 200);
    return (await res.json()).data;
  };
  const engines = async () => (await list()).map((e) => `${e.id}:${e.state}:${e.pid}`);
  try {
    const before = await engines();
    assertEquals(before.length, 2);

    const attacks: [string, string, string | undefined, Record<string, string>][] = [
      [
        "POST",
        "/management/engines/register",
        JSON.stringify({
          id: "evil",
          base_url: "http://127.0.0.1:9/v1",
          kind: "chat",
          models: ["demo/chat"],
        }),
        PAGE,
      ],
      ["POST", "/management/engines", JSON.stringify({ model: "demo/chat", reuse: false }), PAGE],
      ["DELETE", "/management/engines/chat", undefined, PAGE],
      ["DELETE", "/management/engines/embedding", undefined, PAGE],
      ["OPTIONS", "/management/engines/register", undefined, {
        origin: PAGE.origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      }],
    ];
    for (const [method, path, body, headers] of attacks) {
      const res = await fetch(`${v1}${path}`, { method, headers, body });
      const error = (await res.json()).error;
      assertEquals([res.status, error.code], [403, "origin_not_allowed"], `${method} ${path}`);
      assertEquals(res.headers.get("access-control-allow-origin"), null);
    }

    assertEquals(await engines(), before, "no engine was stopped, started or registered");
    assert(isProcessAlive(stack.state.llmPid) && isProcessAlive(stack.state.embeddingPid));
    // Measured after the attack, with margin for a loaded machine.
    const ms = await timeNormalChat(v1);
    assert(ms < 1000, `a normal chat took ${Math.round(ms)} ms`);
  } finally {
    // Should an attack get through, its engines would persist in the shared test home's state
    // file and come back in every later stack: delete them.
    for (const e of await list().catch(() => [])) {
      if (e.id !== "chat" && e.id !== "embedding") {
        await (await fetch(`${v1}/management/engines/${e.id}`, { method: "DELETE" })).body
          ?.cancel();
      }
    }
    await stack.stop();
  }
});
