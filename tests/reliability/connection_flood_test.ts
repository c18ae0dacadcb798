// Attack: a flood of idle, half-sent connections (`GET ... X-Slow: ` and nothing more) to well
// above the gateway's connection cap. Before our own server, the gateway died of EMFILE and took
// its engines with it.
import { RawClient } from "../http/http1/_raw_client.ts";
import { rssBytes, startServedStack, timeNormalChat } from "../_helpers/served_stack.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assert } from "../_assert.ts";

const CAP = 128;
const FLOOD = 1500;
const MiB = 1024 * 1024;

Deno.test("connection flood: the gateway answers 503 over its cap, stays up, and serves again at once", async () => {
  // A long header timeout: the cap, not the timeout, is what holds the flood off here.
  const stack = await startServedStack([
    "--max-connections",
    String(CAP),
    "--header-timeout-ms",
    "120000",
  ]);
  const flood: RawClient[] = [];
  try {
    const gatewayUrl = stack.state.gatewayUrl!;
    await timeNormalChat(gatewayUrl); // warm
    const baseline = await rssBytes(stack.pid);
    for (let i = 0; i < FLOOD; i++) {
      const c = await RawClient.open(gatewayUrl);
      await c.send("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      flood.push(c);
    }
    const refused = (c: RawClient) => c.closed || c.text.startsWith("HTTP/1.1 503 ");
    const over = flood.slice(CAP + 8); // the cap counts the warm-up's keep-alive connection too
    await waitFor(() => over.every(refused), {
      timeoutMs: 30_000,
      what: "every connection over the cap refused (503) or closed",
    });
    assert(
      over.filter((c) => c.text.includes('"code":"too_many_connections"')).length > over.length / 2,
      "most connections over the cap got the 503 JSON answer",
    );
    const during = await rssBytes(stack.pid); // throws if the gateway is gone
    for (const c of flood) await c.close();
    flood.length = 0;
    // The gateway notices the closes asynchronously; then a normal chat is prompt.
    assert(await answersHealth(gatewayUrl, 10_000), "the gateway answers again after the flood");
    const ms = await timeNormalChat(gatewayUrl);
    assert(ms < 1000, `a normal chat took ${ms.toFixed(0)} ms after the flood`);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await rssBytes(stack.pid);
    console.log(
      `gateway RSS: baseline ${(baseline / MiB).toFixed(1)} MiB, during the flood ${
        (during / MiB).toFixed(1)
      } MiB, after ${(after / MiB).toFixed(1)} MiB; normal chat after: ${ms.toFixed(0)} ms`,
    );
    assert(after < baseline + 32 * MiB, "gateway memory came back near its baseline");
  } finally {
    for (const c of flood) await c.close();
    await stack.stop();
  }
});

async function answersHealth(gatewayUrl: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  const health = gatewayUrl.replace(/\/v1$/, "/health");
  while (Date.now() < deadline) {
    const res = await fetch(health).catch(() => null);
    await res?.body?.cancel();
    if (res?.status === 200) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
