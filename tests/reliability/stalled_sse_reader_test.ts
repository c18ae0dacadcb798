// Attack: streaming requests whose client never reads a byte. The streams are pulled only as the
// socket takes them, so the gateway's memory stays flat; once its writes have been blocked for
// the write-stall timeout it cuts the connection, which cancels the upstream request and the
// engine's generation.
import { RawClient } from "../http/http1/_raw_client.ts";
import { rssBytes, startServedStack, timeNormalChat } from "../_helpers/served_stack.ts";
import { assert } from "../_assert.ts";

const STALLED = 3;
const MiB = 1024 * 1024;
// About 2 KiB of SSE per token (20 top logprobs) times 64 choices: far more than the socket
// buffers between engine, gateway and client hold, so the gateway's writes block. (With 8 choices
// a stream whose choices all met the demo model's end-of-sequence early, ~2 MB in all, fit the
// buffers and finished with a 200 before the gateway could cut it, once in 6 suite runs.)
const BODY = JSON.stringify({
  model: "demo/chat",
  messages: [{ role: "user", content: "hi" }],
  stream: true,
  n: 64,
  max_tokens: 2000,
  logprobs: true,
  top_logprobs: 20,
});

Deno.test("stalled SSE readers: gateway memory stays flat and the engine's work is cancelled", async () => {
  const stack = await startServedStack(["--write-stall-timeout-ms", "1000"]);
  const stalled: RawClient[] = [];
  try {
    const gatewayUrl = stack.state.gatewayUrl!;
    const engineMetrics = `http://127.0.0.1:${stack.state.llmPort}/metrics`;
    await timeNormalChat(gatewayUrl); // warm
    const baseline = await rssBytes(stack.pid);
    let peak = baseline;
    for (let i = 0; i < STALLED; i++) {
      const c = await RawClient.open(gatewayUrl, { read: false });
      await c.send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          `Content-Length: ${BODY.length}\r\n\r\n${BODY}`,
      );
      stalled.push(c);
    }
    const cancelled = () =>
      metric(
        engineText,
        /svc_http_requests_total\{route="\/v1\/chat\/completions",method="POST",status="499"\} (\d+)/,
      );
    let engineText = "";
    const deadline = Date.now() + 120_000;
    while (true) {
      peak = Math.max(peak, await rssBytes(stack.pid));
      engineText = await (await fetch(engineMetrics)).text();
      const running = metric(engineText, /svc_engine_running_requests\{[^}]*\} (\d+)/);
      if (cancelled() >= STALLED && running === 0) break;
      assert(Date.now() < deadline, `not cancelled in time; engine metrics:\n${engineText}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const gatewayText = await (await fetch(gatewayUrl.replace(/\/v1$/, "/metrics"))).text();
    assert(
      metric(gatewayText, /svc_gateway_requests_cancelled_total (\d+)/) >= STALLED,
      `the gateway counts them as cancelled:\n${gatewayText}`,
    );
    for (const c of stalled) await c.close();
    stalled.length = 0;
    const ms = await timeNormalChat(gatewayUrl);
    console.log(
      `gateway RSS: baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${
        (peak / MiB).toFixed(1)
      } MiB; normal chat after: ${ms.toFixed(0)} ms`,
    );
    assert(peak < baseline + 64 * MiB, "the gateway did not buffer the streams");
    assert(ms < 1000, `a normal chat took ${ms.toFixed(0)} ms after the attack`);
  } finally {
    for (const c of stalled) await c.close();
    await stack.stop();
  }
});

function metric(text: string, pattern: RegExp): number {
  return Number(pattern.exec(text)?.[1] ?? 0);
}
