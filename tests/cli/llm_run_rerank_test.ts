// `svc llm run` of a reranker as a real subprocess: the kind is read from the demo model, the
// endpoints are printed, and /v1/rerank answers on the printed address until SIGTERM.
import { assertEquals, assertMatch } from "../_assert.ts";
import { CHILD_HOME } from "../gateway/_child_home.ts";
import { svcCommand } from "../_helpers/svc_command.ts";

Deno.test("svc llm run --model demo/rerank serves /v1/rerank and says its weights are random", async () => {
  const child = svcCommand(
    ["llm", "run", "--model", "demo/rerank", "--port", "0", "--device", "cpu", "--offline"],
    { env: { SVC_HOME: CHILD_HOME, SVC_LOG_LEVEL: "warn", NO_COLOR: "1" } },
  ).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  try {
    while (!/svc: serving .*\n/.test(out)) {
      const next = await reader.read();
      if (next.done) throw new Error(`svc llm run ended early: ${out}\n${await stderr}`);
      out += next.value;
    }
    assertMatch(out, /svc: serving demo\/rerank \(rerank, q8, RANDOM weights\) at \S+ — \/rerank/);
    const baseUrl = out.match(/at (http:\S+\/v1)/)![1];
    const res = await fetch(`${baseUrl}/rerank`, {
      method: "POST",
      body: JSON.stringify({ model: "demo/rerank", query: "q", documents: ["a", "b"] }),
    });
    assertEquals(res.status, 200);
    assertEquals((await res.json()).results.length, 2);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reader.cancel();
    assertMatch(await stderr, /RANDOM weights/);
  }
});
